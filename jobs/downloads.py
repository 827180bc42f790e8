"""Result download URLs: fresh at every read, valid one hour.

With S3 (django-storages) it is S3's presigned URL. With local storage it is a
URL of ours carrying a TimestampSigner token for the job id; it needs no API key
(like a presigned URL) and after an hour, or with a tampered token, it is 404.
"""

from __future__ import annotations

from django.conf import settings
from django.core import signing
from django.core.files.storage import FileSystemStorage, default_storage
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase
from django.urls import reverse

from jobs.models import Job
from lib.errors import json_error

URL_LIFETIME_SECONDS = 3600
_SALT = "jobs.result-download"


def result_url(job: Job) -> str | None:
    if job.status != Job.Status.COMPLETED or not job.result_name:
        return None
    if not isinstance(default_storage, FileSystemStorage):
        return str(default_storage.url(job.result_name, expire=URL_LIFETIME_SECONDS))  # type: ignore[call-arg]
    token = signing.TimestampSigner(salt=_SALT).sign(job.pk)
    return settings.SITE_URL + reverse("job-result-download", args=[token])


def result_download(request: HttpRequest, token: str) -> HttpResponseBase:
    try:
        job_id = signing.TimestampSigner(salt=_SALT).unsign(token, max_age=URL_LIFETIME_SECONDS)
    except signing.BadSignature:  # also SignatureExpired
        return _not_found()
    job = Job.objects.filter(pk=job_id, status=Job.Status.COMPLETED).exclude(result_name="").first()
    if job is None or request.method not in ("GET", "HEAD"):
        return _not_found()
    response = FileResponse(default_storage.open(job.result_name, "rb"), as_attachment=True, filename=f"{job.pk}.csv")
    response["Content-Type"] = "text/csv; charset=utf-8"
    response["Cache-Control"] = "private, no-store"
    return response


def _not_found() -> HttpResponse:
    return json_error(404, "not_found", "This download link is unknown or has expired.")
