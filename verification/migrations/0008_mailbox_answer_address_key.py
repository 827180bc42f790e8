"""Mailbox answers keyed by the address's HMAC (lib/address_keys.py), never the address: existing
rows are hashed, replies that name their address are cut, and where two rows meet under one key
(addresses that differed only in case) the newest answer is kept. Backwards, the cache is emptied:
the addresses cannot be recovered, and a cache may start empty."""

import re

from django.db import migrations, models

from lib.address_keys import address_key


def hash_addresses(apps, schema_editor):
    MailboxAnswer = apps.get_model("verification", "MailboxAnswer")
    seen, doomed, changed = set(), [], []
    for row in MailboxAnswer.objects.order_by("-asked_at", "-id").iterator(chunk_size=2000):
        key = address_key(row.email)
        if key in seen:
            doomed.append(row.pk)
            continue
        seen.add(key)
        row.address_key = key
        row.text = re.sub(re.escape(row.email.strip()), "<address>", row.text, flags=re.IGNORECASE)[:1000]
        changed.append(row)
    MailboxAnswer.objects.filter(pk__in=doomed).delete()
    MailboxAnswer.objects.bulk_update(changed, ["address_key", "text"], batch_size=2000)


def forget(apps, schema_editor):
    apps.get_model("verification", "MailboxAnswer").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("verification", "0007_retried_verification"),
    ]

    operations = [
        migrations.AddField(
            model_name="mailboxanswer", name="address_key", field=models.CharField(max_length=64, null=True)
        ),
        migrations.RunPython(hash_addresses, forget),
        migrations.RemoveField(model_name="mailboxanswer", name="email"),
        migrations.AlterField(
            model_name="mailboxanswer", name="address_key", field=models.CharField(max_length=64, unique=True)
        ),
    ]
