# RateWindow moves from accounts to api (apikit/), beside the per-key throttle that is its only user.
# Its table keeps its name and its rows: this migration only tells Django's state where the model
# now lives (accounts 0016 drops it there).
import django.db.models.deletion
from django.db import migrations, models


def content_type_follows(apps, schema_editor):
    """Admin permissions and log entries keep pointing at the model under its new app."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="accounts", model="ratewindow").update(app_label="api")


def content_type_returns(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="api", model="ratewindow").update(app_label="accounts")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0015_apikey_key_mode"),
        ("api", "0003_idempotency_key_mode"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="RateWindow",
                    fields=[
                        (
                            "key",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                primary_key=True,
                                related_name="+",
                                serialize=False,
                                to="accounts.apikey",
                            ),
                        ),
                        ("window_second", models.BigIntegerField(help_text="Unix time of the window's second.")),
                        ("hits", models.PositiveIntegerField()),
                    ],
                    options={"db_table": "accounts_ratewindow"},
                ),
            ],
        ),
        migrations.RunPython(content_type_follows, content_type_returns),
    ]
