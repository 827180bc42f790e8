from __future__ import annotations

from django.core.files.storage import default_storage
from django.core.files.uploadedfile import UploadedFile
from django.db.models import Q
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiCallback, OpenApiResponse, OpenApiWebhook, extend_schema, inline_serializer
from rest_framework import serializers as drf_serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.auditing import audit
from accounts.models import AuditEvent
from accounts.permissions import Action
from apikit.exceptions import json_error
from apikit.idempotency import fingerprint, idempotency_claim
from apikit.views import (
    BODY_ERRORS,
    IDEMPOTENCY_HEADER,
    IDEMPOTENCY_PARAMETER,
    AccountAPIView,
    error_responses,
    validated,
)
from jobs.csvfile import MAX_ROWS, MAX_UPLOAD_BYTES
from jobs.downloads import download_find, download_name, download_url
from jobs.models import Job, JobQuerySet, is_job_id
from jobs.processing import job_delete
from jobs.results import STATUSES, JobNotFound, results_file
from jobs.serializers import (
    BulkSubmitResponseSerializer,
    CallbackBodySerializer,
    JobListQuerySerializer,
    JobSerializer,
    PreviewSerializer,
    ResultsQuerySerializer,
)
from jobs.services import file_too_large, job_preview, job_submitted
from lib.errors import DomainError
from lib.jsonbody import JSON_CONTENT_TYPE, render_json
from verification.engine.modes import VALIDATION_MODES, ValidationMode

UPLOAD_ERRORS = {
    400: "invalid_file (also a row of more than 1,000 columns), invalid_callback_url or invalid_request "
    "(a bad Idempotency-Key)",
    403: "plan_upgrade_required (bulk on the free plan) or key_not_permitted",
    413: "file_too_large: over 25 MB",
    422: "too_many_rows (over 100,000 address rows) or idempotency_key_reused",
}

COMPLETION_EVENT = extend_schema(
    summary="bulk.completed / bulk.failed, POSTed to callback_url",
    description=(
        "Sent once the job completes or fails, to the `callback_url` given at submission. Headers: "
        "`X-Service-Signature: t=<unix>,v1=<hex>` (HMAC-SHA256 over `{t}.{raw body}` keyed with your "
        "signing secret; two v1 values for 24 h after a rotation) and `X-Service-Event-Id` (the same on "
        "every retry), and the Standard Webhooks headers `webhook-id` (the same event id), `webhook-timestamp` "
        "and `webhook-signature: v1,<base64>` (HMAC-SHA256 over `{id}.{timestamp}.{raw body}` keyed with the "
        "base64 decoding of what follows `whsec_`; two, space-separated, for 24 h after a rotation), which "
        "Standard Webhooks libraries verify as they are. Answer 2xx within 10 s; anything else is retried 5 "
        "times (30 s, 2 min, 8 min, 32 min, ~2 h), each attempt signed afresh with a fresh result_url. "
        "Redirects are not followed."
    ),
    request=CallbackBodySerializer,
    responses={200: OpenApiResponse(description="Any 2xx acknowledges the event.")},
)
COMPLETION_CALLBACK = OpenApiCallback(
    name="completion", path="{$request.body#/callback_url}", decorator=COMPLETION_EVENT
)
# The same event as a top-level webhook (settings.SPECTACULAR_SETTINGS["WEBHOOKS"]).
COMPLETION_WEBHOOK = OpenApiWebhook(name="bulk_job_finished", decorator=COMPLETION_EVENT)

UPLOAD_PARTS = {
    "file": {"type": "string", "format": "binary"},
    "callback_url": {"type": "string"},
    "email_column": {
        "type": "string",
        "description": "The address column: a header name (any case) or a 1-based number. Default: detected.",
    },
    "validation_mode": {
        "type": "string",
        "enum": list(VALIDATION_MODES),
        "description": "`fast` (default) or `deep` (SMTP; refused with deep_mode_disabled unless the operator "
        "turned deep mode on). One credit per address either way.",
    },
}

# Room for the multipart boundaries, part headers and the callback_url field around the file.
_MULTIPART_SLACK_BYTES = 64 * 1024


class JobsAPIView(AccountAPIView):
    def jobs(self) -> JobQuerySet:
        """The jobs the calling key may see: its account's, of its own mode (live or test)."""
        return Job.objects.seen_by(account=self.account, key_mode=self.key.key_mode)


class BulkSubmitApi(AccountAPIView):
    permission = {"POST": Action.BULK}
    parser_classes = [MultiPartParser]

    @extend_schema(
        operation_id="verify_bulk",
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": UPLOAD_PARTS,
            }
        },
        responses={
            202: BulkSubmitResponseSerializer,
            **error_responses(*BODY_ERRORS, 402, 403, 409, 422, described=UPLOAD_ERRORS),
        },
        parameters=[IDEMPOTENCY_PARAMETER],
        summary=f"Submit a CSV of up to {MAX_ROWS:,} addresses and {MAX_UPLOAD_BYTES // 2**20} MB",
        description=(
            "Checks the plan, the balance, the file and the callback URL before anything is queued; the job "
            "then runs in workers, reserving credits as it goes. The same Idempotency-Key and file replay "
            "the first answer."
        ),
        callbacks=[COMPLETION_CALLBACK],
    )
    def post(self, request: Request) -> HttpResponse:
        _refuse_obviously_too_large(request)
        upload, callback_url = request.FILES.get("file"), request.POST.get("callback_url") or ""
        email_column = request.POST.get("email_column")
        mode = request.POST.get("validation_mode") or "fast"
        key = request.headers.get(IDEMPOTENCY_HEADER)
        fingerprinted = _fingerprint(upload, callback_url, email_column, mode)
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
        )
        with claim, submitted as submission:
            body, headers = render_json(submission.receipt()), _receipt_headers(submission.job)
            claim.complete(status=202, body=body, headers=headers)
        response = HttpResponse(body, status=202)
        for name, value in headers.items():
            response[name] = value
        return response


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


def _fingerprint(upload: object, callback_url: str, email_column: str | None, mode: str) -> str:
    """The file's bytes, the callback URL and the email column, not the multipart body (its boundary is random)."""
    blocks = upload.chunks() if isinstance(upload, UploadedFile) else []
    column = b"" if email_column is None else b"\0" + email_column.encode("utf-8", "surrogatepass")
    # The default mode adds nothing, so a fast upload's fingerprint is what it was before deep mode.
    mode_part = b"" if mode == ValidationMode.FAST else b"\0mode=" + mode.encode("utf-8", "surrogatepass")
    return fingerprint(*blocks, b"\0" + callback_url.encode(), column, mode_part)


class JobDetailApi(JobsAPIView):
    permission = {"GET": Action.JOBS_READ, "DELETE": Action.JOBS_DELETE}

    @extend_schema(
        operation_id="job_read",
        responses={200: JobSerializer, **error_responses(404, described={404: "not_found: no such job of yours"})},
        summary="Read one bulk job",
        description="Its status and progress, and once completed a fresh result_download_url valid 1 hour.",
    )
    def get(self, request: Request, job_id: str) -> Response:
        job = self.jobs().filter(pk=job_id).first()
        if job is None:
            raise JobNotFound
        return Response(JobSerializer(job).data)

    @extend_schema(
        operation_id="job_delete",
        responses={
            204: OpenApiResponse(description="Deleted."),
            **error_responses(404, described={404: "not_found: no such job of yours (or already deleted)"}),
        },
        summary="Delete a bulk job and its files",
        description=(
            "A pending or processing job is stopped first: its unused reservations are released and no callback "
            "is sent. Its files are deleted at once; afterwards the job is 404 everywhere, download links included. "
            "Ledger entries stay."
        ),
    )
    def delete(self, request: Request, job_id: str) -> HttpResponse:
        job_delete(account=self.account, job_id=job_id, key_mode=self.key.key_mode)
        audit(request, self.account, AuditEvent.Action.JOB_DELETED, job_id, key=self.key)
        return HttpResponse(status=204)


class JobListApi(JobsAPIView):
    permission = {"GET": Action.JOBS_READ}

    @extend_schema(
        operation_id="job_list",
        parameters=[JobListQuerySerializer],
        responses={
            200: inline_serializer(
                "JobList", {"data": JobSerializer(many=True), "has_more": drf_serializers.BooleanField()}
            ),
            **error_responses(400, described={400: "invalid_request: limit or starting_after (param names which)"}),
        },
        summary="List bulk jobs, newest first",
        description="Your account's jobs only. Page with starting_after (the last id of the previous page).",
    )
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

    @extend_schema(
        operation_id="verify_bulk_preview",
        request={"multipart/form-data": {"type": "object", "properties": UPLOAD_PARTS}},
        responses={
            200: PreviewSerializer,
            **error_responses(
                *BODY_ERRORS,
                403,
                422,
                described={
                    400: "invalid_request (email_column), invalid_file or invalid_callback_url",
                    403: UPLOAD_ERRORS[403],
                },
            ),
        },
        summary="What an upload would be, free: counts, the detected column, credits needed",
        description=(
            "The same parts, limits, plan check and errors as POST /v1/verify/bulk, but no balance check: "
            "no job is made, no file kept and no credit moved."
        ),
    )
    def post(self, request: Request) -> Response:
        _refuse_obviously_too_large(request)
        preview, _ = job_preview(
            account=self.account,
            upload=request.FILES.get("file"),
            callback_url=request.POST.get("callback_url") or "",
            email_column=request.POST.get("email_column"),
            validation_mode=request.POST.get("validation_mode") or "fast",
            key_mode=self.key.key_mode,
        )
        return Response(preview)


class JobResultsApi(JobsAPIView):
    permission = {"GET": Action.JOBS_READ}

    @extend_schema(
        operation_id="job_results",
        parameters=[ResultsQuerySerializer],
        responses={
            302: OpenApiResponse(description="Location: a fresh download URL, valid 1 hour."),
            **error_responses(
                400,
                404,
                409,
                410,
                described={
                    400: "invalid_request: status or columns is not one of the allowed values",
                    404: "not_found: no such job of yours, or the job failed (it has no results)",
                    409: "job_not_finished: the job is pending or processing",
                },
            ),
        },
        summary="Download a finished job's results, filtered by status, with or without your columns",
        description=(
            "columns=original puts your file's columns first, then the verdict columns prefixed verifier_. "
            "409 job_not_finished while it runs, 404 for a failed job, 410 results_expired after retention."
        ),
    )
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
