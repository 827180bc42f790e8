from __future__ import annotations

import time
from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, OpenApiWebhook, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.permissions import Action
from apikit.idempotency import idempotency_claim, json_fingerprint
from apikit.views import BODY_ERRORS, IDEMPOTENCY_HEADER, IDEMPOTENCY_PARAMETER, AccountAPIView, error_responses
from lib.jsonbody import JSON_CONTENT_TYPE, render_json
from verification.resolution import retried_read
from verification.serializers import (
    MAX_BATCH,
    BatchRequestSerializer,
    ResolvedEventSerializer,
    RetriedVerificationSerializer,
    VerificationResultSerializer,
    VerifyArgs,
    VerifyRequestSerializer,
    batch_request,
    verify_request,
)
from verification.services import verifications_charged

VERIFY_ERRORS = {
    400: "invalid_request (malformed JSON, a missing or wrongly typed field, an email over 1,000 characters, "
    "a bad Idempotency-Key), invalid_callback_url or deep_mode_disabled (deep mode is off)",
    413: "request_too_large: a JSON body over 16 KB",
    422: "idempotency_key_reused",
    451: "address_objected: the person at this address objected to its verification; nothing is charged "
    "or stored (docs/privacy.md)",
}
BATCH_ERRORS = VERIFY_ERRORS | {
    400: f"invalid_request (param `emails`: missing, not a list, empty or over {MAX_BATCH}; an item not a string "
    "or over 1,000 characters; malformed JSON, a bad Idempotency-Key), invalid_callback_url or deep_mode_disabled",
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
            "Every 200 costs one credit, with two exceptions: while the service's own DNS resolver is broken "
            "(it fails for names that certainly exist, such as gmail.com), an NXDOMAIN or no-MX answer is not "
            "believed. The address is answered `unknown` / `dns_temporary_failure`, cached nowhere, and "
            "costs nothing: the fault is the service's, not the address's. Ask again later. And where the "
            "operator charges only for definitive answers (`charges_unknown: false` in GET /v1/account), "
            "every `unknown` answer is free.\n\n"
            "A deep answer `unknown` for a temporary reason (greylisted, smtp_unreachable) carries a "
            "`verification_id`: it is asked again later, and its resolution is sent to `callback_url` as a "
            "signed `verification.resolved` event and readable at GET /v1/verifications/{id}. It costs one "
            "credit in all.\n\n"
            "With `validation_mode: deep` (when the operator has turned it on) it also asks the domain's mail "
            "server over SMTP whether the mailbox exists; such a request answers within 2 x the SMTP "
            "step timeout + 5 s."
        ),
    )
    def post(self, request: Request) -> HttpResponse:
        return _verified(self, request, verify_request(request.data), lambda results: results[0], param="email")


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
        return _verified(self, request, batch_request(request.data), lambda results: {"data": results}, param="emails")


def _verified(view: AccountAPIView, request: Request, args: VerifyArgs, shape: Any, *, param: str) -> HttpResponse:
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
        account=account,
        emails=args.emails,
        mode=args.mode,
        live=key.is_live,
        started=started,
        key=key,
        callback_url=args.callback_url,
        param=param,
    )
    with claim, charged as results:
        body = render_json(shape([result.to_dict() for result in results]))
        claim.complete(status=200, body=body, headers={"Content-Type": JSON_CONTENT_TYPE})
    return HttpResponse(body, content_type=JSON_CONTENT_TYPE)


class VerificationApi(AccountAPIView):
    permission = {"GET": Action.VERIFY}

    @extend_schema(
        operation_id="verification_read",
        responses={
            200: RetriedVerificationSerializer,
            **error_responses(404, described={404: "not_found: no verification of yours asked again under this id"}),
        },
        summary="A verification asked again later: its latest result and resolution (free)",
        description=(
            "A deep answer `unknown` for a temporary reason carries a `verification_id`; it is asked again on "
            "the operator's schedule (by default 5 min, 15 min, 1 h, 4 h and 12 h after the attempt before) until "
            "it answers anything but `unknown` (`resolved`) or the schedule runs out (`gave_up`). Readable for "
            "7 days after it settles. A test key finds none: the sandbox answers at once and never asks again."
        ),
    )
    def get(self, request: Request, verification_id: str) -> Response:
        found = retried_read(account=self.account, key_mode=self.key.key_mode, verification_id=verification_id)
        return Response(RetriedVerificationSerializer(found).data)


# The event a verification asked again sends when it resolves (settings.SPECTACULAR_SETTINGS["WEBHOOKS"]).
RESOLVED_WEBHOOK = OpenApiWebhook(
    name="verification_resolved",
    decorator=extend_schema(
        summary="verification.resolved, POSTed to the request's callback_url or the account's",
        description=(
            "Sent once when a verification asked again later answers something other than `unknown` (never when "
            "it gives up). Signed and retried as a bulk job's callback: `X-Service-Signature`, `X-Service-Event-Id` "
            "and the Standard Webhooks headers; answer 2xx within 10 s, anything else is retried 5 times."
        ),
        request=ResolvedEventSerializer,
        responses={200: OpenApiResponse(description="Any 2xx acknowledges the event.")},
    ),
)
