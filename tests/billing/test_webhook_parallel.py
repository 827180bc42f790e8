"""Twenty deliveries of one event at once, over HTTP to a live server: one grant, on SQLite and PostgreSQL."""

from __future__ import annotations

import urllib.request
from typing import Any

from billing.models import Payment, StripeEvent
from tests.billing.conftest import balance_and_ledger, with_customer
from tests.factories import AccountFactory
from tests.support.db import committed_db
from tests.support.stripe_events import event, invoice, payment_intent, plan_line, signed
from tests.support.threads import run_at_once

pytestmark = committed_db
PARALLEL = 20


def post_at_once(url: str, payload: dict[str, Any]) -> list[int]:
    body, header = signed(payload)

    def post() -> int:
        request = urllib.request.Request(
            url, data=body, method="POST", headers={"Content-Type": "application/json", "Stripe-Signature": header}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status)

    return run_at_once(PARALLEL, post)


def test_twenty_parallel_deliveries_of_one_payment_grant_once(live_server: Any, stripe_on: Any) -> None:
    account = AccountFactory(credits=100)
    payload = event(
        "payment_intent.succeeded", payment_intent(account=str(account.public_id), pack="pack_1k", cents=1000)
    )
    assert post_at_once(f"{live_server.url}/webhooks/stripe", payload) == [200] * PARALLEL
    assert balance_and_ledger(account) == (1100, 1100)
    assert (Payment.objects.count(), StripeEvent.objects.count()) == (1, 1)


def test_twenty_parallel_invoice_events_grant_once(live_server: Any, stripe_on: Any) -> None:
    account = AccountFactory(credits=100, plan_code="free")
    with_customer(account)
    paid = invoice(customer="cus_test1", lines=[plan_line("starter", 2900)])
    kinds = ["invoice.paid", "invoice.payment_succeeded"]
    for kind in kinds:
        assert post_at_once(f"{live_server.url}/webhooks/stripe", event(kind, paid)) == [200] * PARALLEL
    assert balance_and_ledger(account) == (5100, 5100)
    account.refresh_from_db()
    assert account.plan.code == "starter"
    assert Payment.objects.count() == 1
