from __future__ import annotations

import importlib

from django.apps import AppConfig

from lib.garbage import lifelong_frozen
from lib.schedules import keep_schedules
from verification.engine.smtp_replies import rules as smtp_reply_rules
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
    and imports the tasks it runs (the chunks' whole path, deep mode's SMTP client and its reply
    rules too: a fresh worker's first deep chunk otherwise spent 0.2-0.4 s on them, on the first
    customer's clock), then puts what it holds for life out of the garbage collector's walks
    (lib/garbage.py)."""
    rules_load()
    from jobs import queue

    importlib.import_module(queue.TASKS)
    smtp_reply_rules()
    lifelong_frozen()
