from __future__ import annotations

from django.apps import AppConfig

from lib.schedules import Every, keep_schedules


class JobsConfig(AppConfig):
    name = "jobs"

    def ready(self) -> None:
        keep_schedules(
            self,
            Every(60, "jobs: sweep orphaned uploads", "jobs.tasks.sweep_orphan_uploads"),
            Every(60, "jobs: delete files past retention", "jobs.tasks.expire_job_files"),
        )
