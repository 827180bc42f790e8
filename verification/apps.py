from __future__ import annotations

from django.apps import AppConfig

from lib.schedules import Every, keep_schedules


class VerificationConfig(AppConfig):
    name = "verification"

    def ready(self) -> None:
        keep_schedules(self, Every(60, "verification: prune expired rows", "verification.tasks.prune_expired"))
