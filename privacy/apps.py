from __future__ import annotations

from django.apps import AppConfig

from lib.schedules import keep_schedules


class PrivacyConfig(AppConfig):
    name = "privacy"

    def ready(self) -> None:
        from privacy import exports, queue  # noqa: F401  (exports connects the file's deletion with its row)

        keep_schedules(self, *queue.SCHEDULES)
