"""POST /v1/privacy/erasures: a customer erases addresses from everything its account holds (docs/privacy.md)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.permissions import Action
from apikit.views import BODY_ERRORS, AccountAPIView, error_responses
from privacy.erasure import MAX_EMAILS, emails_of
from privacy.serializers import ErasureRequestSerializer, ErasureResultSerializer
from privacy.services import account_erasure


class ErasureApi(AccountAPIView):
    permission = {"POST": Action.ERASE}
    live_only = "A test key may not erase the account's data: use a live key."
    max_body_bytes = 1024 * 1024  # 1,000 addresses of up to 1,000 characters

    @extend_schema(
        operation_id="privacy_erasure",
        request=ErasureRequestSerializer,
        responses={
            200: ErasureResultSerializer,
            **error_responses(
                *BODY_ERRORS,
                described={
                    400: f"invalid_request (param `emails`): not a list of 1 to {MAX_EMAILS:,} non-blank strings "
                    "of at most 1,000 characters, or an item holds a control character (such as NUL); "
                    "nothing is erased",
                    403: "key_not_permitted: only a live `full` key created by an owner or admin may erase",
                    413: "request_too_large: a JSON body over 1 MB",
                },
            ),
        },
        summary=f"Erase up to {MAX_EMAILS:,} addresses from everything this account holds (free)",
        description=(
            "Removes every trace of the addresses that the account holds: its cached verdicts, its reported "
            "outcomes, the stored replies of idempotent requests that name them, and their rows in its finished "
            "jobs' result files (rewritten without them; the jobs' counts stay as they were). A job still "
            "running keeps its rows: erase again once it has finished. Addresses are matched trimmed and "
            "lower-cased. Recorded in the audit log (how many addresses, never which). Answers how many went, "
            "by store."
        ),
    )
    def post(self, request: Request) -> Response:
        emails = emails_of(request.data)
        erased = account_erasure(request=request, account=self.account, emails=emails, key=self.key)
        return Response({"erased": erased})
