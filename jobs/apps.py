from __future__ import annotations

from django.apps import AppConfig

from lib.garbage import lifelong_frozen
from lib.schedules import keep_schedules
from verification.engine.verdict import rules_load


class JobsConfig(AppConfig):
    name = "jobs"

    def ready(self) -> None:
        from django_q.signals import post_spawn

        from jobs import queue  # imports django_q's models: only once the apps are ready

        keep_schedules(self, *queue.SCHEDULES)
        post_spawn.connect(_worker_started, dispatch_uid="jobs-worker-started")


def _worker_started(**_: object) -> None:
    """A qcluster worker reads the verdict rules' lists as it starts, before any job is waiting on it,
    then puts what it holds for life out of the garbage collector's walks (lib/garbage.py)."""
    rules_load()
    lifelong_frozen()
