from __future__ import annotations

import hashlib
import json
import math
import time

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request

from billing.services import InsufficientCredits
from lib.api import AccountAPIView, error_responses
from lib.errors import ApiError
from lib.renderers import JSON_CONTENT_TYPE, render_json
from verification.engine import Verdict
from verification.idempotency import HEADER as IDEMPOTENCY_HEADER
from verification.idempotency import run_idempotent
from verification.models import IdempotencyRecord
from verification.serializers import VerificationResultSerializer, VerifyRequestSerializer, verify_request
from verification.services import verification_perform

IDEMPOTENCY_PARAMETER = OpenApiParameter(
    IDEMPOTENCY_HEADER,
    {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7e]+$"},
    OpenApiParameter.HEADER,
    description="Optional. The same key and body within 24 h replays the first response and costs nothing.",
)


class VerifyApi(AccountAPIView):
    @extend_schema(
        operation_id="verify",
        request=VerifyRequestSerializer,
        responses={200: VerificationResultSerializer, **error_responses(400, 402, 409, 422)},
        parameters=[IDEMPOTENCY_PARAMETER],
        summary="Verify one address (1 credit, also when cached)",
        description=(
            "Checks syntax, the domain's MX records, disposable providers and role addresses, and answers "
            "with a verdict. Per-address problems are verdicts (HTTP 200), not errors."
        ),
    )
    def post(self, request: Request) -> HttpResponse:
        email, mode = verify_request(request.data)
        if mode == "deep":
            raise ApiError(400, "deep_mode_disabled", "Deep validation is not available yet.", "validation_mode")
        account = self.account
        if account.credit_balance < 1:
            raise InsufficientCredits
        started = getattr(request._request, "started_at", time.perf_counter())

        def render(verdict: Verdict, cached: bool) -> bytes:
            elapsed_ms = math.ceil((time.perf_counter() - started) * 1000)
            # The shape VerificationResultSerializer documents, without its per-call cost.
            return render_json({**verdict.to_dict(), "cached": cached, "response_time_ms": elapsed_ms})

        def handle(record: IdempotencyRecord | None) -> HttpResponse:
            body = verification_perform(account=account, email=email, render=render, idempotency=record)
            return HttpResponse(body, content_type=JSON_CONTENT_TYPE)

        fingerprint = hashlib.sha256(json.dumps(request.data, sort_keys=True).encode()).hexdigest()
        return run_idempotent(
            account=account, key=request.headers.get(IDEMPOTENCY_HEADER), fingerprint=fingerprint, handler=handle
        )
