from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class VerificationConfig(AppConfig):
    name = "verification"

    def ready(self) -> None:
        post_migrate.connect(_schedules, sender=self)


def _schedules(**kwargs: Any) -> None:
    from lib.schedules import every

    every(minutes=60, name="verification: prune expired rows", func="verification.tasks.prune_expired")
