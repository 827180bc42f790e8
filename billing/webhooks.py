"""`POST /webhooks/stripe`: Stripe's events, signature first (README "Billing")."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from billing import gateway
from billing.fulfilment import event_apply

log = logging.getLogger(__name__)


@csrf_exempt  # Stripe signs instead: no cookie, no CSRF token
@require_POST
def stripe_webhook(request: HttpRequest) -> HttpResponse:
    """400 and nothing changed for a bad, missing or stale signature; else 200, whatever the event."""
    if not gateway.enabled() or not gateway.webhook_secret_set():
        return _refused("not_found", "Stripe billing is not configured here.", status=404)
    try:
        event = gateway.event_verified(payload=request.body, signature=request.headers.get("Stripe-Signature"))
    except gateway.BadSignature as error:
        log.warning("stripe webhook: bad, missing or stale signature")
        return _refused(error.code, error.message)
    except ValueError:
        return _refused("invalid_request", "The body is not a Stripe event.")
    recorded = event_apply(event)
    return JsonResponse({"received": True, "outcome": recorded.outcome})


def _refused(code: str, message: str, *, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message, "param": None}}, status=status)
