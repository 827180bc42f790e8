# IdempotencyRecord moves from verification to api. Its table keeps its name and its rows: this
# migration only tells Django's state where the model now lives (verification 0002 drops it there).
import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


def content_type_follows(apps, schema_editor):
    """Admin permissions and log entries keep pointing at the model under its new app."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="verification", model="idempotencyrecord").update(app_label="api")


def content_type_returns(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="api", model="idempotencyrecord").update(app_label="verification")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("accounts", "0005_login_window"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("verification", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="IdempotencyRecord",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("key", models.CharField(max_length=255)),
                        ("fingerprint", models.CharField(max_length=64)),
                        ("state", models.CharField(choices=[("running", "Running"), ("done", "Done")], default="running", max_length=10)),
                        ("response_status", models.PositiveSmallIntegerField(null=True)),
                        ("response_body", models.BinaryField(default=b"")),
                        ("response_headers", models.JSONField(default=dict)),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("expires_at", models.DateTimeField(db_index=True)),
                        ("account", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="accounts.account")),
                    ],
                    options={
                        "db_table": "verification_idempotencyrecord",
                        "constraints": [models.UniqueConstraint(fields=("account", "key"), name="idempotency_key_unique")],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_type_follows, content_type_returns),
    ]
