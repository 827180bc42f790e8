# IdempotencyRecord now lives in api (api 0001): leave its table and rows where they are.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("verification", "0001_initial"),
        ("api", "0001_idempotency_from_verification"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="IdempotencyRecord")],
            database_operations=[],
        ),
    ]
