"""The one place privacy's work goes on the django-q2 queue (named by dotted path, as jobs/queue.py)."""

from __future__ import annotations

from django.db import transaction
from django_q.tasks import async_task

from lib.schedules import Every

TASKS = "privacy.tasks"
BUILD_EXPORT = f"{TASKS}.build_export"

# Kept in the database by `privacy/apps.py` at every migrate.
SCHEDULES = (Every(60, "privacy: delete export files past their link", f"{TASKS}.expire_export_files"),)


def export_build_on_commit(export_id: str) -> None:
    """Build the export in a worker once the transaction that asked for it is committed."""
    transaction.on_commit(lambda: async_task(BUILD_EXPORT, export_id))
