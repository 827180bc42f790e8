"""Recurring django-q2 tasks, declared by the app that owns them and kept in the database.

An app's `AppConfig.ready` calls `keep_schedules(self, ...)`: every `migrate` (also a test
database's) then creates or updates the schedules the code names; no data migration per
schedule, so two apps adding one never collide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


@dataclass(frozen=True)
class Every:
    minutes: int
    name: str
    func: str


def keep_schedules(app: AppConfig, *schedules: Every) -> None:
    def kept(**kwargs: Any) -> None:
        from django_q.models import Schedule  # a model: imported once the apps are ready

        for schedule in schedules:
            Schedule.objects.update_or_create(
                name=schedule.name,
                defaults={
                    "func": schedule.func,
                    "schedule_type": Schedule.MINUTES,
                    "minutes": schedule.minutes,
                    "repeats": -1,
                },
            )

    post_migrate.connect(kept, sender=app, weak=False, dispatch_uid=f"{app.label}: schedules")
