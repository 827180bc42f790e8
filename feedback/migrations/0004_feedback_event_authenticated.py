"""Whether a reported outcome came as an authenticated event of the sending service: only those (or a
paying account's) count across accounts, and only those refund (docs/guarantee.md)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("feedback", "0003_feedback_event_address_key")]

    operations = [
        migrations.AddField(
            model_name="feedbackevent", name="authenticated", field=models.BooleanField(default=False)
        ),
    ]
