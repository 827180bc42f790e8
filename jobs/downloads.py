"""Result download URLs: fresh at every read, valid one hour.

With S3 (django-storages) it is S3's presigned URL. With local storage it is a
URL of ours carrying a TimestampSigner token for the job id and the file; it needs
no API key (like a presigned URL) and after an hour, with a tampered token, or once
the job or its files are gone, it finds nothing (the view, `jobs.apis.result_download`, answers 404).
"""

from __future__ import annotations

from django.conf import settings
from django.core import signing
from django.core.files.storage import FileSystemStorage, default_storage
from django.urls import reverse

from jobs.models import Job

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
