"""Feedback events keyed by the address's HMAC (lib/address_keys.py), never the address: existing
rows are hashed, and where two of one account meet under one key with the same outcome and time
(addresses that differed only in case) the newest row is kept. Backwards, the events are dropped:
their addresses cannot be recovered."""

from django.db import migrations, models

from lib.address_keys import address_key


def hash_addresses(apps, schema_editor):
    FeedbackEvent = apps.get_model("feedback", "FeedbackEvent")
    seen, doomed, changed = set(), [], []
    for row in FeedbackEvent.objects.order_by("-id").iterator(chunk_size=2000):
        key = address_key(row.email)
        identity = (row.account_id, key, row.outcome, row.occurred_at)
        if identity in seen:
            doomed.append(row.pk)
            continue
        seen.add(identity)
        row.address_key = key
        changed.append(row)
    FeedbackEvent.objects.filter(pk__in=doomed).delete()
    FeedbackEvent.objects.bulk_update(changed, ["address_key"], batch_size=2000)


def forget(apps, schema_editor):
    apps.get_model("feedback", "FeedbackEvent").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("feedback", "0002_mailgun_tokens"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="feedbackevent", name="feedback_event_once"),
        migrations.RemoveIndex(model_name="feedbackevent", name="feedback_event_email"),
        migrations.AddField(
            model_name="feedbackevent", name="address_key", field=models.CharField(max_length=64, null=True)
        ),
        migrations.RunPython(hash_addresses, forget),
        migrations.RemoveField(model_name="feedbackevent", name="email"),
        migrations.AlterField(model_name="feedbackevent", name="address_key", field=models.CharField(max_length=64)),
        migrations.AddConstraint(
            model_name="feedbackevent",
            constraint=models.UniqueConstraint(
                fields=("account", "address_key", "outcome", "occurred_at"), name="feedback_event_once"
            ),
        ),
        migrations.AddIndex(
            model_name="feedbackevent",
            index=models.Index(fields=["address_key", "occurred_at"], name="feedback_event_address"),
        ),
    ]
