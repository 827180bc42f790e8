# "mode" meant two things (live/test keys, fast/deep verification): a key's is its key_mode.
# A column rename: every key keeps its value.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0014_key_mode"),
    ]

    operations = [
        migrations.RenameField(model_name="apikey", old_name="mode", new_name="key_mode"),
    ]
