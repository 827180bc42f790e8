"""POST /v1/feedback: what happened to the messages a customer sent (docs/feedback.md)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.permissions import Action
from apikit.views import BODY_ERRORS, AccountAPIView, error_responses
from feedback.reports import MAX_EVENTS
from feedback.serializers import FeedbackRequestSerializer, FeedbackResultSerializer
from feedback.services import feedback_record_body


class FeedbackApi(AccountAPIView):
    permission = {"POST": Action.VERIFY}
    # 1,000 events, each an address of up to 254 characters and a time.
    max_body_bytes = 1024 * 1024

    @extend_schema(
        operation_id="feedback_report",
        request=FeedbackRequestSerializer,
        responses={
            200: FeedbackResultSerializer,
            **error_responses(
                *BODY_ERRORS,
                described={
                    400: f"invalid_request: `events` missing, not a list of 1 to {MAX_EVENTS} objects, an `outcome` "
                    "not one of the four; nothing is stored",
                    413: "request_too_large: a JSON body over 1 MB",
                },
            ),
        },
        summary=f"Report what happened to sent messages (free; up to {MAX_EVENTS} events)",
        description=(
            "Delivered, hard bounce, soft bounce or complaint, per address. For 90 days a hard bounce makes the "
            "address `invalid` / `mailbox_not_found` in this account's verdicts, and a delivery settles a "
            "catch-all, unreachable or greylisted address as `valid` (the result's `feedback` says which "
            "report). Idempotent: the same (address, outcome, occurred_at) is stored once. A test key's events "
            "are checked and counted, never stored."
        ),
    )
    def post(self, request: Request) -> Response:
        tally = feedback_record_body(account=self.account, body=request.data, store=self.key.is_live)
        return Response(tally.to_dict())
