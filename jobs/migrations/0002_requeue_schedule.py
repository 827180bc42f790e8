"""The every-minute schedule that re-queues chunks whose worker died (lease expired)."""

from django.db import migrations

NAME = "jobs: re-queue stale chunks"


def create_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        name=NAME,
        defaults={"func": "jobs.tasks.requeue_stale_chunks", "schedule_type": "I", "minutes": 1, "repeats": -1},
    )


def delete_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
