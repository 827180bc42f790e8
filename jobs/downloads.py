"""A finished job's downloads (docs/bulk.md, "Filtered downloads"): all rows or some statuses,
verdict or original columns, and the URLs they are fetched from.

URLs are fresh at every read and valid one hour. With S3 (django-storages) it is S3's presigned URL.
With local storage it is a URL of ours carrying a TimestampSigner token for the job id and the file;
it needs no API key (like a presigned URL) and after an hour, with a tampered token, or once the job
or its files are gone, it finds nothing (the view, `jobs.apis.result_download`, answers 404).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection
from typing import Literal

from django.conf import settings
from django.core import signing
from django.core.files.storage import FileSystemStorage, default_storage
from django.urls import reverse

from jobs import files, original_file, result_rows
from jobs.models import Job
from lib.errors import DomainError
from verification.engine import Status

STATUSES = tuple(status.value for status in Status)
Columns = Literal["verdict", "original"]
_STATUS_AT = result_rows.RESULT_COLUMNS.index("status")


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


URL_LIFETIME_SECONDS = 3600
_SALT = "jobs.result-download"


def result_url(job: Job) -> str | None:
    if job.status != Job.Status.COMPLETED or not job.result_name:
        return None
    return download_url(job, job.result_name)


def download_url(job: Job, name: str) -> str:
    """A fresh URL, valid one hour, for one of the job's files."""
    if not isinstance(default_storage, FileSystemStorage):
        return str(default_storage.url(name, expire=URL_LIFETIME_SECONDS))  # type: ignore[call-arg]
    token = signing.TimestampSigner(salt=_SALT).sign_object([job.pk, name])
    return settings.SITE_URL + reverse("job-result-download", args=[token])


def download_find(token: str) -> tuple[Job, str] | None:
    """The completed job and file a download token names, while it is valid and the file is there."""
    try:
        job_id, name = signing.TimestampSigner(salt=_SALT).unsign_object(token, max_age=URL_LIFETIME_SECONDS)
    except (signing.BadSignature, ValueError, TypeError):  # also SignatureExpired
        return None
    job = Job.objects.filter(pk=job_id, status=Job.Status.COMPLETED, files_expired_at__isnull=True).first()
    if job is None or not _serves(job, name):
        return None
    return job, name


# How a download's file name says which columns it holds (the storage names' `verdict`/`original`).
COLUMN_WORDS = {"verdict": "verdicts", "original": "with-your-columns"}


def download_name(job: Job, name: str) -> str:
    """`<their file name>-<statuses>-<columns>.csv`, one pattern for every download: list-all-verdicts.csv,
    list-valid-risky-with-your-columns.csv, list-unknown-verdicts.csv."""
    stem = (job.filename or job.pk).rsplit(".", 1)[0]
    whole = {job.result_name: ("all", "verdict"), job.original_name: ("all", "original")}
    statuses, columns = whole.get(name) or _filtered(name)
    return f"{stem}-{statuses}-{COLUMN_WORDS[columns]}.csv"


def _filtered(name: str) -> tuple[str, str]:
    """A filtered file's storage name is `…/downloads/<columns>-<status>[-<status>…].csv`."""
    columns, _, statuses = name.rsplit("/", 1)[-1].removesuffix(".csv").partition("-")
    return statuses, columns


def _serves(job: Job, name: str) -> bool:
    return isinstance(name, str) and name.startswith(f"jobs/{job.pk}/") and default_storage.exists(name)
