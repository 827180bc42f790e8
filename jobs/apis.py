from __future__ import annotations

from typing import Any

from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db.models import Q
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.views.decorators.csrf import csrf_exempt
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.auditing import audit
from accounts.models import AuditEvent
from accounts.permissions import Action
from apikit.exceptions import json_error
from apikit.idempotency import fingerprint, idempotency_claim
from apikit.views import (
    IDEMPOTENCY_HEADER,
    AccountAPIView,
    validated,
)
from jobs import schema
from jobs.csvfile import MAX_UPLOAD_BYTES
from jobs.downloads import STATUSES, JobNotFound, download_find, download_name, download_url, results_file
from jobs.lifecycle import job_delete
from jobs.models import Job, JobQuerySet, is_job_id
from jobs.previews import job_preview
from jobs.retention import retention_days_checked
from jobs.serializers import (
    JobListQuerySerializer,
    JobSerializer,
    ResultsQuerySerializer,
)
from jobs.services import Submission, credits_after_job, file_too_large, job_submitted
from lib.errors import DomainError
from lib.jsonbody import JSON_CONTENT_TYPE, render_json
from verification.engine.modes import ValidationMode

# Room for the multipart boundaries, part headers and the callback_url field around the file.
_MULTIPART_SLACK_BYTES = 64 * 1024


class JobsAPIView(AccountAPIView):
    def jobs(self) -> JobQuerySet:
        """The jobs the calling key may see: its account's, of its own mode (live or test)."""
        return Job.objects.seen_by(account=self.account, key_mode=self.key.key_mode)


class BulkSubmitApi(AccountAPIView):
    permission = {"POST": Action.BULK}
    parser_classes = [MultiPartParser]

    @schema.BULK_SUBMIT_POST
    def post(self, request: Request) -> HttpResponse:
        _refuse_obviously_too_large(request)
        upload, callback_url = request.FILES.get("file"), request.POST.get("callback_url") or ""
        email_column = request.POST.get("email_column")
        mode = request.POST.get("validation_mode") or ValidationMode.FAST
        retention = request.POST.get("retention_days") or ""
        key = request.headers.get(IDEMPOTENCY_HEADER)
        # Only a request with a key is compared with an earlier one: no need to hash a 25 MiB file otherwise.
        fingerprinted = _fingerprint(upload, callback_url, email_column, mode, retention) if key is not None else ""
        claim = idempotency_claim(account=self.account, key=key, fingerprint=fingerprinted, key_mode=self.key.key_mode)
        if claim.replay is not None:
            return claim.replay
        submitted = job_submitted(
            account=self.account,
            upload=upload,
            callback_url=callback_url,
            email_column=email_column,
            validation_mode=mode,
            key_mode=self.key.key_mode,
            key=self.key,
            retention_days=retention_days_checked(retention, account=self.account),
        )
        with claim, submitted as submission:
            body, headers = render_json(_receipt(submission)), _receipt_headers(submission.job)
            claim.complete(status=202, body=body, headers=headers)
        response = HttpResponse(body, status=202)
        for name, value in headers.items():
            response[name] = value
        self.credits_after = credits_after_job(submission.job)
        return response

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        response = super().finalize_response(request, response, *args, **kwargs)
        if (after := getattr(self, "credits_after", None)) is not None:
            response["X-Credits-Remaining"] = str(after)  # the balance once this job has taken its credits
        return response


def _receipt(submission: Submission) -> dict[str, object]:
    """The 202's body: the job as accepted and how long it should take."""
    job = submission.job
    return {
        "id": job.pk,
        "status": job.status,
        "total_emails": job.total,
        "estimated_seconds": submission.estimated_seconds,
    }


def _receipt_headers(job: Job) -> dict[str, str]:
    return {"Content-Type": JSON_CONTENT_TYPE, "Location": f"/v1/jobs/{job.pk}"}


def _refuse_obviously_too_large(request: Request) -> None:
    """Refuse from Content-Length alone, before a byte of the body is read."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > MAX_UPLOAD_BYTES + _MULTIPART_SLACK_BYTES:
        raise file_too_large()


def _fingerprint(upload: object, callback_url: str, email_column: str | None, mode: str, retention: str = "") -> str:
    """The file's bytes, the callback URL and the email column, not the multipart body (its boundary is random)."""
    blocks = upload.chunks() if isinstance(upload, UploadedFile) else []
    column = b"" if email_column is None else b"\0" + email_column.encode("utf-8", "surrogatepass")
    # The default mode adds nothing, so a fast upload's fingerprint is what it was before deep mode.
    mode_part = b"" if mode == ValidationMode.FAST else b"\0mode=" + mode.encode("utf-8", "surrogatepass")
    kept = b"\0retention=" + retention.encode("utf-8", "surrogatepass") if retention else b""  # likewise
    return fingerprint(*blocks, b"\0" + callback_url.encode(), column, mode_part, kept)


class JobDetailApi(JobsAPIView):
    permission = {"GET": Action.JOBS_READ, "DELETE": Action.JOBS_DELETE}

    @schema.JOB_DETAIL_GET
    def get(self, request: Request, job_id: str) -> Response:
        job = self.jobs().filter(pk=job_id).first()
        if job is None:
            raise JobNotFound
        return Response(JobSerializer(job).data)

    @schema.JOB_DETAIL_DELETE
    def delete(self, request: Request, job_id: str) -> HttpResponse:
        job_delete(account=self.account, job_id=job_id, key_mode=self.key.key_mode)
        audit(request, self.account, AuditEvent.Action.JOB_DELETED, job_id, key=self.key)
        return HttpResponse(status=204)


class JobListApi(JobsAPIView):
    permission = {"GET": Action.JOBS_READ}

    @schema.JOB_LIST_GET
    def get(self, request: Request) -> Response:
        # A plain dict, not the QueryDict: DRF reads an empty HTML-form value as "not sent", and an
        # empty `limit=` or `starting_after=` is a value like any other here (400, not the default).
        query = validated(JobListQuerySerializer, request.query_params.dict())
        jobs = self.jobs().order_by("-created_at", "-id")
        if "starting_after" in query:
            jobs = jobs.filter(_after(self._cursor(query["starting_after"])))
        page = list(jobs[: query["limit"] + 1])
        data = JobSerializer(page[: query["limit"]], many=True).data
        return Response({"data": data, "has_more": len(page) > query["limit"]})

    def _cursor(self, job_id: str) -> Job:
        cursor = self.jobs().filter(pk=job_id).first() if is_job_id(job_id) else None
        if cursor is None:
            message = f"starting_after: {job_id!r} is not the id of one of your jobs."
            raise DomainError(message, "starting_after")
        return cursor


def _after(cursor: Job) -> Q:
    return Q(created_at__lt=cursor.created_at) | Q(created_at=cursor.created_at, id__lt=cursor.pk)


class BulkPreviewApi(AccountAPIView):
    permission = {"POST": Action.BULK}
    parser_classes = [MultiPartParser]

    @schema.BULK_PREVIEW_POST
    def post(self, request: Request) -> Response:
        _refuse_obviously_too_large(request)
        preview, _ = job_preview(
            account=self.account,
            upload=request.FILES.get("file"),
            callback_url=request.POST.get("callback_url") or "",
            email_column=request.POST.get("email_column"),
            validation_mode=request.POST.get("validation_mode") or ValidationMode.FAST,
            key_mode=self.key.key_mode,
        )
        return Response(preview)


class JobResultsApi(JobsAPIView):
    permission = {"GET": Action.JOBS_READ}

    @schema.JOB_RESULTS_GET
    def get(self, request: Request, job_id: str) -> HttpResponse:
        query = validated(ResultsQuerySerializer, request.query_params.dict())
        job = self.jobs().filter(pk=job_id).first()
        if job is None:
            raise JobNotFound
        name = results_file(job=job, statuses=query.get("status", STATUSES), columns=query["columns"])
        return HttpResponseRedirect(download_url(job, name))


@csrf_exempt  # a link in a callback or an API answer, opened without a session (apikit/exceptions.py)
def result_download(request: HttpRequest, token: str) -> HttpResponseBase:
    """A result link (jobs/downloads.py): no API key, like S3's presigned URLs; 404 once it is stale."""
    found = download_find(token) if request.method in ("GET", "HEAD") else None
    if found is None:
        return json_error(404, "not_found", "This download link is unknown or has expired.")
    job, name = found
    response = FileResponse(default_storage.open(name, "rb"), as_attachment=True, filename=download_name(job, name))
    response["Content-Type"] = "text/csv; charset=utf-8"
    response["Cache-Control"] = "private, no-store"
    return response
