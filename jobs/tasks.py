"""django-q2 entry points: thin, idempotent, and they take ids."""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils import timezone

from jobs import retention
from jobs.callbacks import callback_attempt, verifications_resolve
from jobs.chunk_runs import chunks_requeue_stale
from jobs.downloads import original_ensure
from jobs.lifecycle import job_complete_if_done
from jobs.models import Job
from jobs.retention import job_files_expire
from jobs.worker import chunk_run, chunk_run_next, chunks_resume
from lib.niceness import lower_priority


def run_next_chunk() -> None:
    """Bulk work, at a lower CPU priority than the web (BULK_WORKER_NICENESS)."""
    lower_priority(settings.BULK_WORKER_NICENESS)
    chunk_run_next(budget=settings.BULK_TASK_SECONDS)


def run_chunk(chunk_id: int) -> None:
    """One given chunk (queued before fair share, and by tests)."""
    lower_priority(settings.BULK_WORKER_NICENESS)
    chunk_run(chunk_id=chunk_id)


def resume_chunks() -> None:
    """Once the DNS resolver answers again (a one-off schedule made while it was broken)."""
    chunks_resume()


def complete_job(job_id: str) -> None:
    job_complete_if_done(job_id=job_id)


def assemble_original(job_id: str) -> None:
    """After completion: the result file with the customer's own columns (jobs.downloads.original_ensure)."""
    job = Job.objects.filter(pk=job_id).first()
    if job is not None:
        original_ensure(job=job)


def requeue_stale_chunks() -> int:
    """Every minute (a Schedule made by a data migration): re-queue abandoned chunks."""
    return chunks_requeue_stale()


def deliver_callback(delivery_id: int, number: int | None = None) -> None:
    """Attempt `number` of a delivery (None: the next; schedules made before numbering pass none)."""
    callback_attempt(delivery_id=delivery_id, number=number)


def sweep_orphan_uploads() -> int:
    """Hourly (jobs/apps.py): delete what uploads cut off by a crash left behind."""
    deleted = retention.orphan_sweep(lambda ids: set(Job.objects.filter(pk__in=ids).values_list("pk", flat=True)))
    logging.getLogger(__name__).info("swept %d orphaned upload files", len(deleted))
    return len(deleted)


def expire_job_files() -> int:
    """Hourly (jobs/apps.py): delete the files of jobs finished over JOB_RETENTION_DAYS ago."""
    return job_files_expire(now=timezone.now())


def reask_verifications() -> int:
    """Every minute (jobs/queue.py): ask the due temporary unknowns again, announce those that resolved."""
    return verifications_resolve()
