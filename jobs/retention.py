"""How a finished job's files end: by retention, JOB_RETENTION_DAYS after it finished (deleting a
job with its files is `jobs.lifecycle.job_delete`)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings

from jobs import files
from jobs.models import Job

FINISHED = (Job.Status.COMPLETED, Job.Status.FAILED)
# Jobs whose files one run of the scheduled task deletes; the next run takes the rest.
EXPIRE_BATCH = 500


def job_files_expire(*, now: datetime) -> int:
    """Delete the files of jobs finished over JOB_RETENTION_DAYS ago; the rows stay. Returns how many jobs."""
    cutoff = now - timedelta(days=settings.JOB_RETENTION_DAYS)
    due = Job.objects.filter(status__in=FINISHED, completed_at__lt=cutoff, files_expired_at__isnull=True)
    job_ids = list(due.values_list("pk", flat=True)[:EXPIRE_BATCH])
    for job_id in job_ids:
        Job.objects.filter(pk=job_id).update(files_expired_at=now, result_name="", original_name="")
        files.job_files_delete(job_id)
    return len(job_ids)
