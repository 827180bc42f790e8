# A job's live/test is its key_mode (the key it was made with), beside validation_mode (fast/deep).
# A column rename: every job keeps its value.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0009_job_mode"),
    ]

    operations = [
        migrations.RenameField(model_name="job", old_name="mode", new_name="key_mode"),
    ]
