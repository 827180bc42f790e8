"""The jobs API in the OpenAPI schema: each operation's description beside the others (the views
in jobs/apis.py wear them as `@schema.NAME`), the completion callback and webhook, and the result
download.

`/v1/results/{token}` is a plain Django view (a signed link anyone holding it may use, no API
key), so drf-spectacular does not see it; `document_result_download` describes it next to the operations.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiCallback, OpenApiResponse, OpenApiWebhook, extend_schema, inline_serializer
from rest_framework import serializers as drf_serializers

from accounts.plans import RETENTION_MAX_DAYS
from apikit.views import (
    BODY_ERRORS,
    IDEMPOTENCY_PARAMETER,
    error_responses,
)
from jobs.csvfile import MAX_ROWS, MAX_UPLOAD_BYTES
from jobs.serializers import (
    BulkSubmitResponseSerializer,
    CallbackBodySerializer,
    JobListQuerySerializer,
    JobSerializer,
    PreviewSerializer,
    ResultsQuerySerializer,
)
from verification.engine.modes import VALIDATION_MODES

ERROR_REF = {"$ref": "#/components/schemas/Error"}


def document_result_download(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    result["paths"]["/v1/results/{token}"] = {
        "get": {
            "operationId": "result_download",
            "summary": "Download a job's result CSV (the link in result_download_url)",
            "description": (
                "A signed link valid 1 hour from when it was issued; no API key. With S3 storage the link is "
                "S3's presigned URL instead, and S3 answers (403 when expired)."
            ),
            "tags": ["results"],
            "security": [],
            "parameters": [{"name": "token", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {
                "200": {
                    "description": "The result file (its columns: docs/bulk.md, Download).",
                    "content": {"text/csv": {"schema": {"type": "string"}}},  # UTF-8 text
                },
                "404": {
                    "description": "not_found: unknown, tampered or expired link",
                    "content": {"application/json": {"schema": ERROR_REF}},
                },
            },
        }
    }
    return result


UPLOAD_ERRORS = {
    400: "invalid_file (also a row of more than 1,000 columns), invalid_callback_url or invalid_request "
    "(a bad Idempotency-Key; `retention_days` not a whole number from 1 to the plan's maximum)",
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

RETENTION_PART = {
    "type": "integer",
    "minimum": 1,
    "maximum": max(RETENTION_MAX_DAYS.values()),
    "description": "Days the job's files are kept once it finished, from 1 to the plan's maximum (Starter 30, "
    "Pro 90, Enterprise 365). Default: the account's default (the portal's Privacy page), else 30.",
}


BULK_SUBMIT_POST = extend_schema(
    operation_id="verify_bulk",
    request={
        "multipart/form-data": {
            "type": "object",
            "properties": UPLOAD_PARTS | {"retention_days": RETENTION_PART},
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


JOB_DETAIL_GET = extend_schema(
    operation_id="job_read",
    responses={200: JobSerializer, **error_responses(404, described={404: "not_found: no such job of yours"})},
    summary="Read one bulk job",
    description="Its status and progress, and once completed a fresh result_download_url valid 1 hour.",
)


JOB_DETAIL_DELETE = extend_schema(
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


JOB_LIST_GET = extend_schema(
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


BULK_PREVIEW_POST = extend_schema(
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
                403: "key_not_permitted",
            },
        ),
    },
    summary="What an upload would be and what the list is worth, free on every plan",
    description=(
        "The same parts, limits and errors as POST /v1/verify/bulk, but neither the plan nor the balance "
        "is checked: no job is made, no file kept and no credit moved. `estimate` gives the shares of a "
        "random sample of the list (at most 200 addresses, at most half the list) checked in fast mode, "
        "with the margin of error at 95%; it never says which address got which verdict. A list of fewer "
        "than 100 unique addresses is not estimated, and an account has at most 10 new lists estimated in "
        "any 24 hours (the same list again is answered with the same estimate): past that, `estimate` is "
        "null and `estimate_withheld` says why. `bulk_in_plan` false: the plan must be upgraded to clean "
        "the list."
    ),
)


JOB_RESULTS_GET = extend_schema(
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
        "columns=original gives back every row of your file that had an address cell, in upload order, "
        "duplicates included (each address verified and charged once): your columns first, then the verdict "
        "columns prefixed verifier_, then duplicate_of_row (the number of the address's first row in your "
        "file, the header being row 1; empty on a first row). columns=verdict: one row per unique address. "
        "409 job_not_finished while it runs, 404 for a failed job, 410 results_expired after retention."
    ),
)
