"""The one place jobs' work goes on the django-q2 queue: every task queued, every schedule kept.

The tasks themselves are `jobs/tasks.py` (thin entry points that take ids and call the services).
They are named here, and only here, by their dotted path (what django-q2 stores in the database):
the services queue work through these functions and never import the tasks, which import the
services. `tests/jobs/test_queue.py` checks that every name resolves to a task and every task is
named.
"""

from __future__ import annotations

import contextlib
from datetime import datetime

from django.db import IntegrityError, transaction
from django_q.models import Schedule
from django_q.tasks import async_task, schedule

from lib.schedules import Every

TASKS = "jobs.tasks"
RUN_NEXT_CHUNK = f"{TASKS}.run_next_chunk"
COMPLETE_JOB = f"{TASKS}.complete_job"
ASSEMBLE_ORIGINAL = f"{TASKS}.assemble_original"
DELIVER_CALLBACK = f"{TASKS}.deliver_callback"
RESUME_CHUNKS = f"{TASKS}.resume_chunks"
RUN_CHUNK = f"{TASKS}.run_chunk"  # one given chunk: queued by nothing now, kept for tasks already queued

# Kept in the database by `jobs/apps.py` at every migrate.
SCHEDULES = (
    Every(1, "jobs: re-queue stale chunks", f"{TASKS}.requeue_stale_chunks"),
    Every(60, "jobs: sweep orphaned uploads", f"{TASKS}.sweep_orphan_uploads"),
    Every(60, "jobs: delete files past retention", f"{TASKS}.expire_job_files"),
    # Deep verifications answered `unknown` for a temporary reason, asked again when due
    # (verification/resolution.py); here because their resolution is announced by a callback.
    Every(1, "jobs: ask temporary unknowns again", f"{TASKS}.reask_verifications"),
)


def chunk_work(count: int) -> None:
    """Queue `count` tasks that each run whichever chunk's turn it is (jobs/fair_share.py)."""
    for _ in range(count):
        async_task(RUN_NEXT_CHUNK)


def chunk_work_at(when: datetime, *, name: str) -> None:
    """One task that runs whichever chunk's turn it is, at `when` (a deep chunk's greylist retry):
    a one-off schedule, so no worker sleeps waiting for it."""
    schedule(RUN_NEXT_CHUNK, name=name, schedule_type=Schedule.ONCE, next_run=when)


RESUME_SCHEDULE = "jobs: resume bulk work once the resolver answers"


def chunk_work_resumed(*, when: datetime) -> None:
    """Bulk work stopped for a broken resolver: look again at `when` (one schedule, however many
    tasks stopped). django-q2 refuses a second schedule of the name, raising IntegrityError: the
    later workers have nothing left to do. (Its check is no constraint: a rare race making two
    costs a few extra tasks that find nothing to claim.)"""
    with contextlib.suppress(IntegrityError):  # another worker's schedule stands
        schedule(RESUME_CHUNKS, name=RESUME_SCHEDULE, schedule_type=Schedule.ONCE, next_run=when)


def job_completion(job_id: str) -> None:
    async_task(COMPLETE_JOB, job_id)


def original_assembly_on_commit(job_id: str) -> None:
    """After the caller's transaction commits: the customer's-columns result file, off the job's clock."""
    transaction.on_commit(lambda: async_task(ASSEMBLE_ORIGINAL, job_id))


def callback_attempt_on_commit(delivery_id: int, number: int) -> None:
    transaction.on_commit(lambda: async_task(DELIVER_CALLBACK, delivery_id, number))


def callback_attempt_at(delivery_id: int, number: int, *, name: str, when: datetime) -> None:
    """A retry: a one-off schedule, so no worker sleeps waiting for it."""
    schedule(DELIVER_CALLBACK, delivery_id, number, name=name, schedule_type=Schedule.ONCE, next_run=when)
