from __future__ import annotations

import hashlib

from django.core.files.uploadedfile import UploadedFile
from django.db.models import Q
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers as drf_serializers
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from billing.services import InsufficientCredits
from jobs.csvfile import MAX_ROWS, MAX_UPLOAD_BYTES, CsvFileError, read_addresses
from jobs.models import Job
from jobs.serializers import BulkSubmitResponseSerializer, JobListQuerySerializer, JobSerializer
from jobs.services import estimated_seconds, job_create
from lib import outbound
from lib.api import AccountAPIView, validated
from lib.errors import ApiError
from lib.renderers import JSON_CONTENT_TYPE, render_json
from verification.apis import IDEMPOTENCY_PARAMETER
from verification.idempotency import HEADER as IDEMPOTENCY_HEADER
from verification.idempotency import run_idempotent
from verification.models import IdempotencyRecord

# Room for the multipart boundaries, part headers and the callback_url field around the file.
_MULTIPART_SLACK_BYTES = 64 * 1024


class BulkSubmitApi(AccountAPIView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        operation_id="verify_bulk",
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {"file": {"type": "string", "format": "binary"}, "callback_url": {"type": "string"}},
            }
        },
        responses={202: BulkSubmitResponseSerializer},
        parameters=[IDEMPOTENCY_PARAMETER],
        summary=f"Submit a CSV of up to {MAX_ROWS:,} addresses and {MAX_UPLOAD_BYTES // 2**20} MB",
    )
    def post(self, request: Request) -> HttpResponse:
        account = self.account
        if not account.plan.allows_bulk:
            raise ApiError(403, "plan_upgrade_required", "Bulk verification needs the Starter plan or above.")
        if account.credit_balance < 1:
            raise InsufficientCredits
        _refuse_obviously_too_large(request)
        upload = _uploaded_file(request)
        callback_url = _callback_url(request)

        def handle(record: IdempotencyRecord | None) -> HttpResponse:
            addresses = _addresses(upload)
            body: dict[str, bytes] = {}

            def respond(job: Job) -> None:
                payload = {
                    "id": job.pk,
                    "status": job.status,
                    "total_emails": job.total,
                    "estimated_seconds": estimated_seconds(job.total),
                }
                body["json"] = render_json(BulkSubmitResponseSerializer(payload).data)
                if record is not None:
                    record.complete(status=202, body=body["json"], headers=_headers(job))

            job = job_create(account=account, addresses=addresses, callback_url=callback_url, on_created=respond)
            response = HttpResponse(body["json"], status=202, content_type=JSON_CONTENT_TYPE)
            response["Location"] = _headers(job)["Location"]
            return response

        return run_idempotent(
            account=account,
            key=request.headers.get(IDEMPOTENCY_HEADER),
            fingerprint=_fingerprint(upload, callback_url),
            handler=handle,
        )


def _headers(job: Job) -> dict[str, str]:
    return {"Content-Type": JSON_CONTENT_TYPE, "Location": f"/v1/jobs/{job.pk}"}


def _too_large() -> ApiError:
    return ApiError(413, "file_too_large", f"The file is larger than {MAX_UPLOAD_BYTES // 2**20} MB.", "file")


def _invalid_file(message: str) -> ApiError:
    return ApiError(400, "invalid_file", message, "file")


def _refuse_obviously_too_large(request: Request) -> None:
    """Refuse from Content-Length alone, before a byte of the body is read."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > MAX_UPLOAD_BYTES + _MULTIPART_SLACK_BYTES:
        raise _too_large()


def _uploaded_file(request: Request) -> UploadedFile:
    upload = request.FILES.get("file")
    if not isinstance(upload, UploadedFile):
        raise _invalid_file("Send the CSV file as the multipart part 'file'.")
    if upload.size is not None and upload.size > MAX_UPLOAD_BYTES:
        raise _too_large()
    if not upload.size:
        raise _invalid_file("The file is empty.")
    return upload


def _callback_url(request: Request) -> str:
    url = request.POST.get("callback_url") or ""
    if not isinstance(url, str):
        raise ApiError(400, "invalid_callback_url", "callback_url must be a URL.", "callback_url")
    if not url:
        return ""
    if len(url) > 2000:
        raise ApiError(400, "invalid_callback_url", "callback_url is longer than 2000 characters.", "callback_url")
    try:
        outbound.check_url(url)
    except outbound.UnsafeUrl as refused:
        raise ApiError(400, "invalid_callback_url", str(refused), "callback_url") from None
    return url


def _addresses(upload: UploadedFile) -> list[str]:
    try:
        return read_addresses(upload.file, max_rows=MAX_ROWS)  # type: ignore[arg-type]
    except CsvFileError as error:
        status = 422 if error.code == "too_many_rows" else 400
        raise ApiError(status, error.code, error.message, "file") from None


def _fingerprint(upload: UploadedFile, callback_url: str) -> str:
    """The file's bytes and the callback URL, not the multipart body (its boundary is random)."""
    digest = hashlib.sha256()
    for block in upload.chunks():
        digest.update(block)
    digest.update(b"\0" + callback_url.encode())
    return digest.hexdigest()


class JobDetailApi(AccountAPIView):
    @extend_schema(operation_id="job_read", responses={200: JobSerializer}, summary="Read one bulk job")
    def get(self, request: Request, job_id: str) -> Response:
        job = Job.objects.filter(pk=job_id, account=self.account).first()
        if job is None:
            raise ApiError(404, "not_found", "No such job.")
        return Response(JobSerializer(job).data)


class JobListApi(AccountAPIView):
    @extend_schema(
        operation_id="job_list",
        parameters=[JobListQuerySerializer],
        responses={
            200: inline_serializer(
                "JobList", {"data": JobSerializer(many=True), "has_more": drf_serializers.BooleanField()}
            )
        },
        summary="List bulk jobs, newest first",
    )
    def get(self, request: Request) -> Response:
        query = validated(JobListQuerySerializer, request.query_params)
        jobs = Job.objects.filter(account=self.account).order_by("-created_at", "-id")
        if "starting_after" in query:
            jobs = jobs.filter(_after(self._cursor(query["starting_after"])))
        page = list(jobs[: query["limit"] + 1])
        data = JobSerializer(page[: query["limit"]], many=True).data
        return Response({"data": data, "has_more": len(page) > query["limit"]})

    def _cursor(self, job_id: str) -> Job:
        cursor = Job.objects.filter(account=self.account, pk=job_id).first()
        if cursor is None:
            raise ApiError(400, "invalid_request", f"starting_after: no job {job_id!r}.", "starting_after")
        return cursor


def _after(cursor: Job) -> Q:
    return Q(created_at__lt=cursor.created_at) | Q(created_at=cursor.created_at, id__lt=cursor.pk)
