from __future__ import annotations

import time
from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request

from accounts.permissions import Action
from apikit.idempotency import idempotency_claim, json_fingerprint
from apikit.views import BODY_ERRORS, IDEMPOTENCY_HEADER, IDEMPOTENCY_PARAMETER, AccountAPIView, error_responses
from lib.jsonbody import JSON_CONTENT_TYPE, render_json
from verification.serializers import (
    MAX_BATCH,
    BatchRequestSerializer,
    VerificationResultSerializer,
    VerifyRequestSerializer,
    batch_request,
    verify_request,
)
from verification.services import verifications_charged

VERIFY_ERRORS = {
    400: "invalid_request (malformed JSON, a missing or wrongly typed field, an email over 1,000 characters, "
    "a bad Idempotency-Key) or deep_mode_disabled (deep mode is off)",
    413: "request_too_large: a JSON body over 16 KB",
    422: "idempotency_key_reused",
    451: "address_objected: the person at this address objected to its verification; nothing is charged "
    "or stored (docs/privacy.md)",
}
BATCH_ERRORS = VERIFY_ERRORS | {
    400: f"invalid_request (param `emails`: missing, not a list, empty or over {MAX_BATCH}; an item not a string "
    "or over 1,000 characters; malformed JSON, a bad Idempotency-Key) or deep_mode_disabled",
    402: "insufficient_credits: the balance cannot pay for every distinct address of the batch, or "
    "key_spend_cap_reached: the key's cap cannot; nothing is charged",
    451: "address_objected: one of the addresses (the message names it, e.g. `emails[3]`) is one whose person "
    "objected to its verification; the batch is refused whole, nothing charged or stored",
    413: "request_too_large: a JSON body over 1 MB",
}


class BatchResultSerializer(serializers.Serializer):
    def get_fields(self) -> dict[str, serializers.Field]:
        # `data` cannot be a class attribute: it would hide Serializer.data.
        results = VerificationResultSerializer(many=True, help_text="One result per address, in request order.")
        return {"data": results}


def _verify_schema(
    operation_id: str, request: type, response: Any, errors: dict[int, str], *, summary: str, description: str
) -> Any:
    return extend_schema(
        operation_id=operation_id,
        request=request,
        responses={200: response, **error_responses(*BODY_ERRORS, 402, 409, 422, 451, described=errors)},
        parameters=[IDEMPOTENCY_PARAMETER],
        summary=summary,
        description=description,
    )


class VerifyApi(AccountAPIView):
    permission = {"POST": Action.VERIFY}
    publishable_keys = True  # the one endpoint a publishable key may call (apikit/permissions.py)

    @_verify_schema(
        "verify",
        VerifyRequestSerializer,
        VerificationResultSerializer,
        VERIFY_ERRORS,
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
        email, mode = verify_request(request.data)
        return _verified(self, request, [email], mode, lambda results: results[0], param="email")


class VerifyBatchApi(AccountAPIView):
    permission = {"POST": Action.VERIFY}
    # 100 addresses of up to 1,000 characters, each written as \uXXXX escapes at worst.
    max_body_bytes = 1024 * 1024

    @_verify_schema(
        "verify_batch",
        BatchRequestSerializer,
        BatchResultSerializer,
        BATCH_ERRORS,
        summary=f"Verify up to {MAX_BATCH} addresses at once (1 credit per distinct address)",
        description=(
            "The same verdicts as POST /v1/verify, one per address in request order, with the DNS lookups "
            "of the whole batch done together. An address sent twice is charged once and answered at both "
            "places. A batch the balance cannot pay for whole is refused (402) and nothing is charged."
        ),
    )
    def post(self, request: Request) -> HttpResponse:
        emails, mode = batch_request(request.data)
        return _verified(self, request, emails, mode, lambda results: {"data": results}, param="emails")


def _verified(
    view: AccountAPIView, request: Request, emails: list[str], mode: str, shape: Any, *, param: str
) -> HttpResponse:
    """Verify as the service charges, the reply stored for replay in the charge's transaction."""
    started = getattr(request._request, "started_at", time.perf_counter())
    account, key = view.account, view.key
    claim = idempotency_claim(
        account=account,
        key=request.headers.get(IDEMPOTENCY_HEADER),
        fingerprint=json_fingerprint(request.data),
        key_mode=key.key_mode,
    )
    if claim.replay is not None:
        return claim.replay
    charged = verifications_charged(
        account=account, emails=emails, mode=mode, live=key.is_live, started=started, key=key, param=param
    )
    with claim, charged as results:
        body = render_json(shape([result.to_dict() for result in results]))
        claim.complete(status=200, body=body, headers={"Content-Type": JSON_CONTENT_TYPE})
    return HttpResponse(body, content_type=JSON_CONTENT_TYPE)
