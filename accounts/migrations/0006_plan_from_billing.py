# Plan moves from billing to accounts, beside Account. Its table (billing_plan) keeps its name
# and its rows: this migration only tells Django's state where the model lives now (billing
# 0005 drops it there), and points Account.plan at it, which the database already does.
import django.db.models.deletion
from django.db import migrations, models


def content_type_follows(apps, schema_editor):
    """Staff's permissions on plans and the admin's log entries follow the model."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="billing", model="plan").update(app_label="accounts")


def content_type_returns(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="accounts", model="plan").update(app_label="billing")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_login_window"),
        ("billing", "0004_ledger_usage_index"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Plan",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("code", models.SlugField(max_length=20, unique=True)),
                        ("name", models.CharField(max_length=50)),
                        ("allows_bulk", models.BooleanField(default=False)),
                        ("requests_per_second", models.PositiveIntegerField()),
                        ("sort_order", models.PositiveSmallIntegerField(default=0)),
                    ],
                    options={"db_table": "billing_plan", "ordering": ["sort_order"]},
                ),
                migrations.AlterField(
                    model_name="account",
                    name="plan",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="accounts", to="accounts.plan"
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_type_follows, content_type_returns),
    ]
