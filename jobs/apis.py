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

from jobs.csvfile import MAX_ROWS, MAX_UPLOAD_BYTES
from jobs.models import Job
from jobs.serializers import BulkSubmitResponseSerializer, JobListQuerySerializer, JobSerializer
from jobs.services import estimated_seconds, file_too_large, job_submit, job_upload_allowed, job_upload_check
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
        job_upload_allowed(account=account)
        _refuse_obviously_too_large(request)
        upload, callback_url = job_upload_check(
            account=account, upload=request.FILES.get("file"), callback_url=request.POST.get("callback_url") or ""
        )

        def handle(record: IdempotencyRecord | None) -> HttpResponse:
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

            job = job_submit(account=account, upload=upload, callback_url=callback_url, on_created=respond)
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


def _refuse_obviously_too_large(request: Request) -> None:
    """Refuse from Content-Length alone, before a byte of the body is read."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > MAX_UPLOAD_BYTES + _MULTIPART_SLACK_BYTES:
        raise file_too_large()


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
