"""A finished job's downloads (docs/bulk.md, "Filtered downloads"): all rows or some statuses,
verdict or original columns."""

from __future__ import annotations

import itertools
from collections.abc import Collection
from typing import Literal

from django.core.files.storage import default_storage

from jobs import files, original_file
from jobs.models import Job
from lib.errors import DomainError
from verification.engine import Status

STATUSES = tuple(status.value for status in Status)
Columns = Literal["verdict", "original"]
_STATUS_AT = files.RESULT_COLUMNS.index("status")


class JobNotFinished(DomainError):
    code = "job_not_finished"
    message = "The job has not finished yet: its results are not ready."


class ResultsExpired(DomainError):
    code = "results_expired"
    message = "This job's files have been deleted after the retention period."


class JobNotFound(DomainError):
    code = "not_found"
    message = "No such job."


def results_file(*, job: Job, statuses: Collection[str], columns: Columns) -> str:
    """The storage name of the download asked for; a filtered one is made at its first request."""
    if job.status == Job.Status.FAILED:
        raise JobNotFound  # a failed job has no results (docs/bulk.md)
    if job.status != Job.Status.COMPLETED:
        raise JobNotFinished
    if job.files_expired_at is not None:
        raise ResultsExpired
    source = original_ensure(job=job) if columns == "original" else job.result_name
    if not source:
        raise ResultsExpired
    keep = [status for status in STATUSES if status in statuses]
    if len(keep) == len(STATUSES):
        return source
    name = f"jobs/{job.pk}/downloads/{columns}-{'-'.join(keep)}.csv"
    if default_storage.exists(name):
        return name
    at = _STATUS_AT + (len(job.columns) if columns == "original" else 0)
    return files.filtered_save(source, name, column=at, keep=keep)


def original_ensure(*, job: Job) -> str:
    """The completed job's original-columns file: assembled once (a task does it after completion; a
    download that comes first does it itself) from the input and the parts, which are then deleted."""
    if job.original_name or job.status != Job.Status.COMPLETED or job.files_expired_at:
        return job.original_name
    chunks = list(job.chunks.order_by("index").values_list("index", "part_name", "size"))
    parts = [(index, part) for index, part, _ in chunks if part]
    starts = list(itertools.accumulate((size for _, _, size in chunks[:-1]), initial=0))  # of an ungrouped job
    try:
        name = original_file.original_assemble(
            job.pk, job.columns, job.input_name, parts, starts=starts, grouped=job.grouped_name, total=job.total
        )
    except OSError:  # another caller won and deleted the input meanwhile
        return Job.objects.values_list("original_name", flat=True).get(pk=job.pk)
    won = Job.objects.filter(pk=job.pk, original_name="", files_expired_at__isnull=True).update(original_name=name)
    if not won:
        files.delete_quietly(name)
        return Job.objects.values_list("original_name", flat=True).get(pk=job.pk)
    job.original_name = name
    # only the result files are kept: downloads need nothing else
    files.input_delete(*filter(None, (job.input_name, job.grouped_name)))
    files.delete_quietly(*(part for _, part in parts))
    return name
