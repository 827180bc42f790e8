# Plan now lives in accounts (accounts 0006): leave its table and rows where they are.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0006_plan_from_billing"),
        ("billing", "0004_ledger_usage_index"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="Plan")],
            database_operations=[],
        ),
    ]
