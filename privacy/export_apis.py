"""The account export over the API (docs/privacy.md, "Export"): ask for one, read it, download it.

POST /v1/account/export, GET /v1/account/export/{id} and …/download (an owner's `full` key), and the
signed link mailed to the owner, /v1/account/export/link/{token} (no key: a plain Django view, which
privacy/schema.py describes in the schema).
"""

from __future__ import annotations

from django.core.files.storage import default_storage
from django.http import FileResponse, HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.permissions import Action
from apikit.exceptions import as_api_error, json_error
from apikit.views import AccountAPIView, error_responses
from lib.errors import DomainError
from privacy.exports import download_name, export_by_link, export_file, export_link, export_of
from privacy.models import AccountExport
from privacy.serializers import ExportSerializer
from privacy.services import export_asked

_OWNERS_ONLY = "key_not_permitted: only a live `full` key made by an owner may export the account"
# The sandbox never reaches the account's live data: a test key exports nothing.
_LIVE_ONLY = "A test key may not export the account: use a live key."


def export_resource(export: AccountExport) -> dict[str, object]:
    """The export as the API shows it (ExportSerializer's fields)."""
    status = export.shown_status(timezone.now())
    return {
        "id": export.pk,
        "status": status,
        "progress": export.percent,
        "rows_done": export.rows_done,
        "rows_total": export.rows_total,
        "size_bytes": export.file_bytes if export.status == AccountExport.Status.DONE else None,
        "created_at": export.created_at,
        "started_at": export.started_at,
        "finished_at": export.finished_at,
        "expires_at": export.link_expires_at,
        "download_url": export_link(export) if status == AccountExport.Status.DONE else None,
        "failure": export.failure or None,
    }


class ExportApi(AccountAPIView):
    live_only = _LIVE_ONLY
    permission = {"POST": Action.EXPORT}

    @extend_schema(
        operation_id="account_export",
        request=None,
        responses={202: ExportSerializer, **error_responses(described={403: _OWNERS_ONLY})},
        summary="Export everything the account holds, as a ZIP built in the background (free)",
        description=(
            "Queues a ZIP of the account, its members, API keys (without secrets), credit ledger, payments, audit "
            "log, jobs' metadata and reported outcomes, each as JSON and CSV. Answers 202 with the export; poll "
            "`GET /v1/account/export/{id}`. Once done, the owner is mailed a link valid 24 hours. One export at a "
            "time: asking while one is queued or running answers that one (202, same id) and queues nothing. "
            "Recorded in the audit log."
        ),
    )
    def post(self, request: Request) -> Response:
        export, _ = export_asked(request=request, account=self.account, key=self.key)
        headers = {"Location": f"/v1/account/export/{export.pk}"}
        return Response(ExportSerializer(export_resource(export)).data, status=202, headers=headers)


class ExportDetailApi(AccountAPIView):
    live_only = _LIVE_ONLY
    permission = {"GET": Action.EXPORT}

    @extend_schema(
        operation_id="account_export_read",
        responses={
            200: ExportSerializer,
            **error_responses(404, described={403: _OWNERS_ONLY, 404: "not_found: no export of this account's"}),
        },
        summary="Read an export: its status and progress, and its download link once done",
    )
    def get(self, request: Request, export_id: str) -> Response:
        return Response(ExportSerializer(export_resource(export_of(self.account, export_id))).data)


class ExportDownloadApi(AccountAPIView):
    live_only = _LIVE_ONLY
    permission = {"GET": Action.EXPORT}

    @extend_schema(
        operation_id="account_export_download",
        responses={
            302: OpenApiResponse(description="To the export's signed download link (Location), fresh."),
            **error_responses(
                404,
                409,
                410,
                described={
                    403: _OWNERS_ONLY,
                    404: "not_found: no export of this account's",
                    409: "export_not_ready: the export is queued, running or failed",
                    410: "export_expired: 24 hours since it was done, or an erasure since: its file is deleted",
                },
            ),
        },
        summary="Download an export's ZIP (redirects to its signed link)",
    )
    def get(self, request: Request, export_id: str) -> HttpResponse:
        export = export_of(self.account, export_id)
        export_file(export, now=timezone.now())
        return HttpResponseRedirect(export_link(export))


@csrf_exempt  # a link in a mail or an API answer, opened without a session (as jobs' result links)
def export_link_download(request: HttpRequest, token: str) -> HttpResponseBase:
    """The ZIP, to whoever holds the signed link: 404 unknown, 409 not done, 410 past its 24 hours."""
    if request.method not in ("GET", "HEAD"):
        return json_error(405, "method_not_allowed", f'Method "{request.method}" not allowed.')
    try:
        export = export_by_link(token)
        name = export_file(export, now=timezone.now())
    except DomainError as refusal:
        error = as_api_error(refusal)
        return json_error(error.status_code, error.error_code, error.message)
    response = FileResponse(default_storage.open(name, "rb"), as_attachment=True, filename=download_name(export))
    response["Content-Type"] = "application/zip"
    response["Cache-Control"] = "private, no-store"
    return response
