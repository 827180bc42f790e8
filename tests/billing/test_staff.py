"""Staff see each account's Stripe side (customer, subscription, payments, linked to Stripe) and the money
on the dashboard."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from billing.models import Customer, Payment, StripeEvent

pytestmark = pytest.mark.usefixtures("stripe_on")


def paid(owner: Any, stripe_id: str, cents: int, status: str = "succeeded", kind: str = "pack") -> Payment:
    return Payment.objects.create(
        account=owner.account, stripe_id=stripe_id, kind=kind, product="pack_1k", credits=1000, cents=cents,
        currency="usd", status=status, failure="Your card was declined." if status == "failed" else "",
    )  # fmt: skip


def test_account_admin_shows_stripe_customer_subscription_and_payments_with_links(
    admin_client_: Client, owner: Any
) -> None:
    Customer.objects.create(
        account=owner.account, stripe_id="cus_A1", subscription_id="sub_B2", subscription_plan="pro"
    )
    paid(owner, "pi_C3", 1000)
    paid(owner, "in_D4", 9900, kind="plan")
    page = admin_client_.get(f"/admin/accounts/account/{owner.account.pk}/change/").content.decode()
    assert 'href="https://dashboard.stripe.com/test/customers/cus_A1"' in page
    assert 'href="https://dashboard.stripe.com/test/subscriptions/sub_B2"' in page
    assert 'href="https://dashboard.stripe.com/test/payments/pi_C3"' in page
    assert 'href="https://dashboard.stripe.com/test/invoices/in_D4"' in page


def test_account_admin_of_an_account_that_never_paid(admin_client_: Client, owner: Any) -> None:
    page = admin_client_.get(f"/admin/accounts/account/{owner.account.pk}/change/").content.decode()
    assert "Not a Stripe customer" in page


def test_dashboard_shows_revenue_and_failed_payments(admin_client_: Client, owner: Any) -> None:
    paid(owner, "pi_1", 7000)
    paid(owner, "in_2", 2900, kind="plan")
    paid(owner, "pi_3", 1000, status="failed")
    StripeEvent.objects.create(event_id="evt_1", type="payment_intent.succeeded", outcome="mismatched", detail="odd")
    page = admin_client_.get("/admin/dashboard/").content.decode()
    for window in ("today", "week", "month"):
        assert f'data-figure="revenue-{window}"' in page
    assert ">$99.00</a>" in page
    assert page.count('data-figure="failed-payment"') == 1
    assert page.count('data-figure="mismatched-event"') == 1


def test_payment_event_and_customer_lists_open_for_staff(admin_client_: Client, owner: Any) -> None:
    Customer.objects.create(account=owner.account, stripe_id="cus_A1")
    paid(owner, "pi_1", 7000)
    StripeEvent.objects.create(event_id="evt_1", type="charge.refunded", outcome="ignored")
    for model in ("payment", "customer", "stripeevent"):
        assert admin_client_.get(f"/admin/billing/{model}/").status_code == 200


def test_the_ledger_of_payments_cannot_be_deleted_from_the_admin(admin_client_: Client, owner: Any) -> None:
    payment = paid(owner, "pi_1", 7000)
    assert admin_client_.post(f"/admin/billing/payment/{payment.pk}/delete/", {"post": "yes"}).status_code == 403
    assert Payment.objects.filter(pk=payment.pk).exists()
