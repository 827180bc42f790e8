"""Recurring django-q2 tasks, declared by the app that owns them and kept in the database.

Each app's AppConfig connects `post_migrate` to a function calling `every(...)`, so `migrate`
(also a test database's) creates or updates the schedules the code names; no data migration
per schedule, so two apps adding one never collide.
"""

from __future__ import annotations

from django_q.models import Schedule


def every(*, minutes: int, name: str, func: str) -> None:
    Schedule.objects.update_or_create(
        name=name,
        defaults={"func": func, "schedule_type": Schedule.MINUTES, "minutes": minutes, "repeats": -1},
    )
