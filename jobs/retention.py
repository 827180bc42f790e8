"""How a finished job's files end: by retention, its `retention_days` (asked at upload, else the
account's default, else JOB_RETENTION_DAYS) after it finished (deleting a job with its files is
`jobs.lifecycle.job_delete`)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings

from accounts.models import Account
from accounts.plans import RETENTION_MAX_DAYS
from jobs import files
from jobs.models import Job
from lib.errors import DomainError

FINISHED = (Job.Status.COMPLETED, Job.Status.FAILED)
# Jobs whose files one run of the scheduled task deletes; the next run takes the rest.
EXPIRE_BATCH = 500


def job_files_expire(*, now: datetime) -> int:
    """Delete the files of jobs finished over their retention ago; the rows stay. Returns how many jobs.
    One query per distinct retention (a handful: the setting and the few days customers choose)."""
    kept = Job.objects.filter(status__in=FINISHED, files_expired_at__isnull=True)
    job_ids: list[str] = []
    for days in kept.values_list("retention_days", flat=True).distinct().order_by():
        cutoff = now - timedelta(days=days or settings.JOB_RETENTION_DAYS)
        due = kept.filter(retention_days=days) if days else kept.filter(retention_days__isnull=True)
        job_ids += due.filter(completed_at__lt=cutoff).values_list("pk", flat=True)[: EXPIRE_BATCH - len(job_ids)]
    for job_id in job_ids:
        Job.objects.filter(pk=job_id).update(files_expired_at=now, result_name="", original_name="")
        files.job_files_delete(job_id)
    return len(job_ids)


class RetentionRefused(DomainError):
    param = "retention_days"


def retention_days_checked(value: object, *, account: Account) -> int | None:
    """The days a new job's files are kept: `value` (a multipart part, so text) from 1 to the plan's
    maximum, or when blank the account's default (None: JOB_RETENTION_DAYS). RetentionRefused else."""
    if value in (None, ""):
        return account.job_retention_days
    most = retention_max_days(account)
    if not isinstance(value, (str, int)) or not str(value).strip().isdigit() or not 1 <= int(value) <= most:
        raise RetentionRefused(f"retention_days: Must be a whole number of days from 1 to {most} on this plan.")
    return int(value)


def retention_max_days(account: Account) -> int:
    return RETENTION_MAX_DAYS.get(account.plan.code, settings.JOB_RETENTION_DAYS)
