"""How a job's files end: deleted with the job by its owner, or by retention after JOB_RETENTION_DAYS."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from accounts.models import Account
from billing.services import credits_release
from jobs import files
from jobs.models import Chunk, Job
from jobs.results import JobNotFound

FINISHED = (Job.Status.COMPLETED, Job.Status.FAILED)
# Jobs whose files one run of the scheduled task deletes; the next run takes the rest.
EXPIRE_BATCH = 500


def job_delete(*, account: Account, job_id: str) -> None:
    """Stop the job if it runs (unused reservations released, no callback), delete it and its files.

    The ledger keeps its entries (they name the job in `reference`, not by a foreign key). A
    worker on one of its chunks at this moment loses its finishing UPDATE and charges nothing.
    """
    if not Job.objects.filter(pk=job_id, account=account).exists():
        raise JobNotFound
    with transaction.atomic():
        unfinished = Chunk.objects.filter(job_id=job_id).exclude(state=Chunk.State.DONE)
        locked = list(unfinished.select_for_update())  # chunks before the job, as chunk_claim does
        deleted, _ = Job.objects.filter(pk=job_id, account=account).delete()  # its chunks and callbacks too
        if not deleted:
            raise JobNotFound
        for chunk in locked:
            credits_release(account=account, amount=chunk.reserved or 0, reference=chunk.reference)
    files.job_files_delete(job_id)


def job_files_expire(*, now: datetime) -> int:
    """Delete the files of jobs finished over JOB_RETENTION_DAYS ago; the rows stay. Returns how many jobs."""
    cutoff = now - timedelta(days=settings.JOB_RETENTION_DAYS)
    due = Job.objects.filter(status__in=FINISHED, completed_at__lt=cutoff, files_expired_at__isnull=True)
    job_ids = list(due.values_list("pk", flat=True)[:EXPIRE_BATCH])
    for job_id in job_ids:
        Job.objects.filter(pk=job_id).update(files_expired_at=now, result_name="", original_name="")
        files.job_files_delete(job_id)
    return len(job_ids)
