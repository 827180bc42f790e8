"""A charged valid answer is found through its address key's head, an integer, rather than an index
holding the whole 64-character key (billing/models.py, ValidAnswer)."""

import django.db.models.deletion
from django.db import migrations, models

BATCH = 2000


def heads_filled(apps, schema_editor):
    """Every kept answer's head, from its key (lib/address_keys.py `key_head`, 15 hex digits)."""
    ValidAnswer = apps.get_model("billing", "ValidAnswer")
    while batch := list(ValidAnswer.objects.filter(key_head__isnull=True).only("pk", "address_key")[:BATCH]):
        for answer in batch:
            answer.key_head = int(answer.address_key[:15], 16)
        ValidAnswer.objects.bulk_update(batch, ["key_head"])


class Migration(migrations.Migration):
    dependencies = [
        ("billing", "0009_guarantee"),
    ]

    operations = [
        migrations.AddField(
            model_name="validanswer",
            name="key_head",
            field=models.BigIntegerField(null=True),
        ),
        migrations.RunPython(heads_filled, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="validanswer",
            name="key_head",
            field=models.BigIntegerField(),
        ),
        migrations.RemoveIndex(
            model_name="validanswer",
            name="valid_answer_address",
        ),
        migrations.AddIndex(
            model_name="validanswer",
            index=models.Index(fields=["key_head"], name="valid_answer_head"),
        ),
        migrations.AlterField(
            model_name="validanswer",
            name="account",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="accounts.account",
            ),
        ),
    ]
