from __future__ import annotations

from django.apps import AppConfig

from lib.schedules import keep_schedules


class JobsConfig(AppConfig):
    name = "jobs"

    def ready(self) -> None:
        from jobs import queue  # imports django_q's models: only once the apps are ready

        keep_schedules(self, *queue.SCHEDULES)
