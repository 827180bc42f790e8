from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class JobsConfig(AppConfig):
    name = "jobs"

    def ready(self) -> None:
        post_migrate.connect(_schedules, sender=self)


def _schedules(**kwargs: Any) -> None:
    from lib.schedules import every

    every(minutes=60, name="jobs: sweep orphaned uploads", func="jobs.tasks.sweep_orphan_uploads")
    every(minutes=60, name="jobs: delete files past retention", func="jobs.tasks.expire_job_files")
