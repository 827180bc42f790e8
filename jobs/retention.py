"""How a finished job's files end: by retention, its `retention_days` (asked at upload, else the
account's default, else JOB_RETENTION_DAYS) after it finished (deleting a job with its files is
`jobs.lifecycle.job_delete`)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.files.storage import default_storage
from django.utils import timezone

from accounts.models import Account
from accounts.plans import RETENTION_MAX_DAYS
from jobs import files
from jobs.models import Job
from lib.errors import DomainError
from lib.storage import folder_listing

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


# An upload still being stored is younger than this; an older folder without a job was left by a crash.
ORPHAN_AFTER = timedelta(hours=1)


def orphan_sweep(known_job_ids: Callable[[list[str]], set[str]]) -> list[str]:
    """Delete job folders that have no job row (an upload cut off mid-store) and are over an hour old.

    Also Django's temporary upload files (`*.upload*` in FILE_UPLOAD_TEMP_DIR) left by a web
    process killed mid-request. Returns what was deleted.
    """
    cutoff = timezone.now() - ORPHAN_AFTER
    folders = folder_listing("jobs/")[0]
    known = set().union(*(known_job_ids(folders[i : i + 500]) for i in range(0, len(folders), 500)))
    deleted = []
    for folder in folders:
        names = list(files.walk(f"jobs/{folder}/"))
        if folder not in known and names and max(default_storage.get_modified_time(n) for n in names) < cutoff:
            files.delete_quietly(*names)
            deleted.extend(names)
    return deleted + _sweep_upload_temp(cutoff)


def _sweep_upload_temp(cutoff: datetime) -> list[str]:
    temp = Path(settings.FILE_UPLOAD_TEMP_DIR or tempfile.gettempdir())
    stale = [p for p in temp.glob("*.upload*") if p.is_file() and p.stat().st_mtime < cutoff.timestamp()]
    for path in stale:
        path.unlink(missing_ok=True)
    return [str(path) for path in stale]
