"""The API of CONTRACT section 8: a free preview of an upload, and a finished job's filtered downloads."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseRedirect
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.views import BODY_ERRORS, AccountAPIView, error_responses, validated
from jobs.apis import UPLOAD_PARTS
from jobs.apis import _refuse_obviously_too_large as refuse_obviously_too_large  # the upload's own guard
from jobs.downloads import download_url
from jobs.models import Job
from jobs.preview import job_preview
from jobs.results import STATUSES, JobNotFound, results_file
from jobs.serializers import PreviewSerializer, ResultsQuerySerializer


class BulkPreviewApi(AccountAPIView):
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
                described={400: "invalid_request (email_column), invalid_file or invalid_callback_url"},
            ),
        },
        summary="What an upload would be, free: counts, the detected column, credits needed",
        description=(
            "The same parts, limits, plan check and errors as POST /v1/verify/bulk, but no balance check: "
            "no job is made, no file kept and no credit moved."
        ),
    )
    def post(self, request: Request) -> Response:
        refuse_obviously_too_large(request)
        preview, _ = job_preview(
            account=self.account,
            upload=request.FILES.get("file"),
            callback_url=request.POST.get("callback_url") or "",
            email_column=request.POST.get("email_column"),
        )
        return Response(preview)


class JobResultsApi(AccountAPIView):
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
        job = Job.objects.filter(pk=job_id, account=self.account).first()
        if job is None:
            raise JobNotFound
        name = results_file(job=job, statuses=query.get("status", STATUSES), columns=query["columns"])
        return HttpResponseRedirect(download_url(job, name))
