from __future__ import annotations

import time

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from accounts.permissions import Action
from api.idempotency import idempotency_claim, json_fingerprint
from api.views import BODY_ERRORS, IDEMPOTENCY_HEADER, IDEMPOTENCY_PARAMETER, AccountAPIView, error_responses
from lib.jsonbody import JSON_CONTENT_TYPE, render_json
from verification.serializers import VerificationResultSerializer, VerifyRequestSerializer, verify_request
from verification.services import mode_require, verification_charged

VERIFY_ERRORS = {
    400: "invalid_request (malformed JSON, a missing or wrongly typed field, an email over 1,000 characters, "
    "a bad Idempotency-Key) or deep_mode_disabled (deep mode is off)",
    413: "request_too_large: a JSON body over 16 KB",
    422: "idempotency_key_reused",
}


class VerifyApi(AccountAPIView):
    permission = {"POST": Action.VERIFY}

    @extend_schema(
        operation_id="verify",
        request=VerifyRequestSerializer,
        responses={
            200: VerificationResultSerializer,
            **error_responses(*BODY_ERRORS, 402, 409, 422, described=VERIFY_ERRORS),
        },
        parameters=[IDEMPOTENCY_PARAMETER],
        summary="Verify one address (1 credit, also when cached)",
        description=(
            "Checks syntax, the domain's MX records, disposable providers and role addresses, and answers "
            "with a verdict. Per-address problems are verdicts (HTTP 200), not errors.\n\n"
            "Every 200 costs one credit, with one exception: while the service's own DNS resolver is broken "
            "(it fails for names that certainly exist, such as gmail.com), an NXDOMAIN or no-MX answer is not "
            "believed. The address is answered `unknown` / `dns_temporary_failure`, cached nowhere, and "
            "costs nothing: the fault is the service's, not the address's. Ask again later.\n\n"
            "With `validation_mode: deep` (when the operator has turned it on) it also asks the domain's mail "
            "server over SMTP whether the mailbox exists; such a request answers within 2 x the SMTP "
            "step timeout + 5 s."
        ),
    )
    def post(self, request: Request) -> HttpResponse:
        started = getattr(request._request, "started_at", time.perf_counter())
        email, mode = verify_request(request.data)
        mode_require(mode)
        key = request.headers.get(IDEMPOTENCY_HEADER)
        claim = idempotency_claim(account=self.account, key=key, fingerprint=json_fingerprint(request.data))
        if claim.replay is not None:
            return claim.replay
        with claim, verification_charged(account=self.account, email=email, mode=mode, started=started) as result:
            body = render_json(result.to_dict())
            claim.complete(status=200, body=body, headers={"Content-Type": JSON_CONTENT_TYPE})
        return HttpResponse(body, content_type=JSON_CONTENT_TYPE)
