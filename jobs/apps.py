from __future__ import annotations

import importlib

from django.apps import AppConfig
from django.urls import get_resolver

from lib.garbage import lifelong_frozen
from lib.query_log import statements_logged_only_when_read
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
    """A qcluster worker, as it starts and before any job waits on it: reads the verdict rules'
    lists, imports the tasks it runs (the chunks' whole path, deep mode's SMTP client with it) and
    reads the SMTP reply rules, and compiles the URL patterns a callback's links are made from; then
    puts what it holds for life out of the garbage collector's walks (lib/garbage.py). A fresh
    stack's first deep chunk and first callback otherwise paid for them on the customer's clock.
    Its SQL statements are logged only when someone reads them (lib/query_log.py: with DEBUG on,
    SQLite otherwise runs a quoting query after each)."""
    statements_logged_only_when_read()
    rules_load()
    from jobs import queue

    importlib.import_module(queue.TASKS)
    smtp_reply_rules()
    get_resolver().reverse_dict  # noqa: B018
    lifelong_frozen()
