"""Once made the every-minute schedule that re-queues stale chunks. jobs/queue.py now declares it
with the app's other schedules, kept at every migrate (lib/schedules.py): nothing to do here."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = []
