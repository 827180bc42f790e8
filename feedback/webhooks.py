"""`POST /webhooks/feedback/<provider>/<token>`: a sending service's delivery events (docs/feedback.md).

No key and no session: the token in the URL is the account's secret (rotatable in the portal). A wrong
token or provider is 404; an event type that says nothing about delivery is counted as ignored.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from billing.guarantee import guarantee_refunds
from feedback import esp, sns
from feedback.models import FeedbackInbox
from feedback.reports import Report
from feedback.services import PROVIDERS, Tally, feedback_record, feedback_record_signed
from feedback.signatures import SENDGRID_SIGNATURE, SENDGRID_TIMESTAMP, postmark_check, sendgrid_check
from lib import outbound
from lib.errors import DomainError
from lib.jsonbody import json_parsed

log = logging.getLogger(__name__)


@csrf_exempt  # the secret URL stands in for a session: no cookie, no CSRF token
def feedback_webhook(request: HttpRequest, provider: str, token: str) -> HttpResponse:
    if request.method != "POST":  # in the error's shape, as every other refusal here (not Django's HTML 405)
        refused = _refused("method_not_allowed", f'Method "{request.method}" not allowed.', status=405)
        refused["Allow"] = "POST"
        return refused
    inbox = FeedbackInbox.objects.select_related("account").filter(token=token).first()
    if provider not in PROVIDERS or inbox is None:
        return _refused("not_found", "No such webhook.", status=404)
    try:
        proven = _proven(provider, request, inbox)
        body = json_parsed(request.body)  # nesting bounded: "[" * 100000 is a 400, not a RecursionError
        if provider == "ses":
            return _ses(inbox, body)
        return JsonResponse(_recorded(provider, body, inbox, proven=proven).to_dict())
    except esp.BadSignature as error:
        return _refused(error.code, error.message, status=401)
    except DomainError as error:
        return _refused(error.code, error.message)


def _proven(provider: str, request: HttpRequest, inbox: FeedbackInbox) -> bool:
    """Whether SendGrid's signature or Postmark's credentials, when the account set them, held (BadSignature
    when they did not); False when the account set none: the secret URL alone is then the proof."""
    if provider == "sendgrid" and inbox.sendgrid_verification_key:
        signature, timestamp = (request.headers.get(name) for name in (SENDGRID_SIGNATURE, SENDGRID_TIMESTAMP))
        sendgrid_check(
            key_text=inbox.sendgrid_verification_key, body=request.body, signature=signature, timestamp=timestamp
        )
        return True
    if provider == "postmark" and inbox.postmark_username:
        authorization = request.headers.get("Authorization")
        postmark_check(username=inbox.postmark_username, password=inbox.postmark_password, authorization=authorization)
        return True
    return False


def _recorded(provider: str, body: Any, inbox: FeedbackInbox, *, proven: bool) -> Tally:
    now = timezone.now()
    if provider in ("sendgrid", "postmark"):
        parsed = esp.sendgrid(body, now) if provider == "sendgrid" else esp.postmark(body, now)
        return _authenticated(inbox, parsed) if proven else feedback_record(account=inbox.account, reports=parsed)
    parsed = esp.mailgun(body, now, inbox.mailgun_signing_key)
    if not inbox.mailgun_signing_key:  # nothing to check a token against: the secret URL is the proof
        return feedback_record(account=inbox.account, reports=parsed)
    with transaction.atomic():  # the token, the reports and their refunds together or not at all
        tally = feedback_record_signed(inbox=inbox, token=esp.mailgun_token(body), reports=parsed)
        guarantee_refunds(account=inbox.account, reports=parsed)
    return tally


def _authenticated(inbox: FeedbackInbox, parsed: list[Report | None]) -> Tally:
    """Reports whose sender proved itself: stored as authenticated, and refunded where the guarantee says."""
    with transaction.atomic():
        tally = feedback_record(account=inbox.account, reports=parsed, authenticated=True)
        guarantee_refunds(account=inbox.account, reports=parsed)
    return tally


def _ses(inbox: FeedbackInbox, envelope: Any) -> HttpResponse:
    """SNS wraps SES's notification; a new subscription is confirmed by fetching its SubscribeURL. Either is
    believed only with a valid SNS signature (feedback/sns.py)."""
    if not isinstance(envelope, dict):
        raise esp.BadPayload
    kind = envelope.get("Type")
    if kind not in ("SubscriptionConfirmation", "Notification"):
        return JsonResponse({"accepted": 0, "ignored": 1})
    try:
        sns.verify(envelope)
    except sns.BadSignature as error:
        return _refused("invalid_signature", f"The SNS message signature does not verify: {error}")
    if kind == "SubscriptionConfirmation":
        return _confirm(envelope.get("SubscribeURL"))
    parsed = esp.ses(esp.sns_message(envelope), timezone.now())
    return JsonResponse(_authenticated(inbox, parsed).to_dict())


def _confirm(url: object) -> HttpResponse:
    """One GET through the outbound client: private addresses refused, no redirects, a timeout."""
    if not isinstance(url, str):
        return _refused("invalid_request", "The SubscriptionConfirmation has no SubscribeURL.")
    try:
        answer = outbound.get(url, {"User-Agent": "email-verifier feedback"})
    except outbound.UnsafeUrl as error:
        return _refused("invalid_request", f"SubscribeURL: {error}")
    if not answer.ok:
        log.warning("sns subscription not confirmed: %s %s", answer.status_code, answer.error)
        return _refused("subscription_not_confirmed", "The SubscribeURL did not answer 2xx.", status=502)
    return JsonResponse({"accepted": 0, "ignored": 0, "confirmed": True})


def _refused(code: str, message: str, *, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message, "param": None}}, status=status)
