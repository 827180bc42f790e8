"""Stripe webhook events for the tests, signed exactly as Stripe signs them:
`Stripe-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the endpoint's secret>`."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
from typing import Any

WEBHOOK_SECRET = "whsec_test_0123456789abcdefghijklmnopqrstuv"
_ids = itertools.count(1)


def signature(body: bytes, *, secret: str = WEBHOOK_SECRET, at: int | None = None) -> str:
    stamp = int(time.time()) if at is None else at
    digest = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={stamp},v1={digest}"


def event(kind: str, obj: dict[str, Any], *, event_id: str | None = None) -> dict[str, Any]:
    number = next(_ids)
    return {
        "id": event_id or f"evt_test{number:08d}",
        "object": "event",
        "type": kind,
        "created": int(time.time()),
        "livemode": False,
        "api_version": "2024-06-20",
        "data": {"object": obj},
    }


def signed(payload: dict[str, Any], **kwargs: Any) -> tuple[bytes, str]:
    body = json.dumps(payload).encode()
    return body, signature(body, **kwargs)


def payment_intent(*, account: str, pack: str, cents: int, currency: str = "usd", intent_id: str = "pi_test1") -> dict:
    return {
        "id": intent_id,
        "object": "payment_intent",
        "amount": cents,
        "amount_received": cents,
        "currency": currency,
        "status": "succeeded",
        "created": int(time.time()),
        "metadata": {"account": account, "pack": pack},
        "latest_charge": {"id": "ch_test1", "object": "charge", "receipt_url": "https://pay.example/receipts/1"},
    }


def plan_line(code: str, cents: int, *, amount: int | None = None, ends: int | None = None) -> dict[str, Any]:
    return {
        "object": "line_item",
        "amount": cents if amount is None else amount,
        "currency": "usd",
        "plan": {"id": f"verifier-{code}-{cents}-usd-month", "object": "plan", "amount": cents},
        "proration": amount is not None,
        "period": {"start": int(time.time()), "end": ends or int(time.time()) + 30 * 86400},
    }


def invoice(
    *, customer: str, lines: list[dict[str, Any]], invoice_id: str = "in_test1", created: int | None = None
) -> dict:
    return {
        "id": invoice_id,
        "object": "invoice",
        "customer": customer,
        "subscription": "sub_test1",
        "status": "paid",
        "currency": "usd",
        "amount_paid": sum(line["amount"] for line in lines),
        "created": created or int(time.time()),
        "hosted_invoice_url": f"https://pay.example/invoices/{invoice_id}",
        "lines": {"object": "list", "data": lines},
    }
