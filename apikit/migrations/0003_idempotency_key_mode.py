# An idempotent reply is kept apart by the calling key's key_mode (live/test). A column rename.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0002_idempotency_mode"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="idempotencyrecord", name="idempotency_mode_key_unique"),
        migrations.RenameField(model_name="idempotencyrecord", old_name="mode", new_name="key_mode"),
        migrations.AddConstraint(
            model_name="idempotencyrecord",
            constraint=models.UniqueConstraint(fields=("account", "key_mode", "key"), name="idempotency_mode_key_unique"),
        ),
    ]
