from __future__ import annotations

from django.apps import AppConfig

from lib.schedules import keep_schedules


class VerificationConfig(AppConfig):
    name = "verification"

    def ready(self) -> None:
        from verification import queue

        keep_schedules(self, *queue.SCHEDULES)
