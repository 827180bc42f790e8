"""`POST /webhooks/stripe`: signature first, then each grant exactly once, whatever Stripe redelivers."""

from __future__ import annotations

import time
from typing import Any

import pytest
import time_machine
from django.test import Client

from accounts.models import AuditEvent
from billing.models import Customer, Payment, StripeEvent
from billing.subscriptions import periods_expire
from tests.billing.conftest import balance_and_ledger, with_customer
from tests.support.stripe_events import event, invoice, payment_intent, plan_line, signed

URL = "/webhooks/stripe"
pytestmark = pytest.mark.usefixtures("stripe_on")


def deliver(payload: dict[str, Any], **sign: Any) -> Any:
    body, header = signed(payload, **sign)
    return Client().post(URL, data=body, content_type="application/json", headers={"Stripe-Signature": header})


def pack_event(owner: Any, *, pack: str = "pack_10k", cents: int = 7000, **kwargs: Any) -> dict[str, Any]:
    intent = payment_intent(account=str(owner.account.public_id), pack=pack, cents=cents, **kwargs)
    return event("payment_intent.succeeded", intent)


def test_paid_pack_grants_its_credits_with_the_receipt(owner: Any) -> None:
    response = deliver(pack_event(owner))
    assert response.status_code == 200
    assert balance_and_ledger(owner.account) == (11_000, 11_000)
    payment = Payment.objects.get(account=owner.account)
    assert (payment.product, payment.credits, payment.receipt_url) == (
        "pack_10k",
        10_000,
        "https://pay.example/receipts/1",
    )


def test_redelivered_event_grants_once(owner: Any) -> None:
    payload = pack_event(owner)
    assert [deliver(payload).status_code for _ in range(3)] == [200, 200, 200]
    assert balance_and_ledger(owner.account) == (11_000, 11_000)
    assert StripeEvent.objects.count() == 1


def test_two_events_for_one_payment_intent_grant_once(owner: Any) -> None:
    deliver(pack_event(owner))
    deliver(pack_event(owner))  # another event id, the same PaymentIntent
    assert balance_and_ledger(owner.account) == (11_000, 11_000)
    assert list(StripeEvent.objects.values_list("outcome", flat=True)) == ["already", "granted"]


@pytest.mark.parametrize(
    ("pack", "cents", "currency"),
    [("pack_10k", 1000, "usd"), ("pack_10k", 7000, "eur"), ("pack_5k", 7000, "usd")],
    ids=["amount", "currency", "unknown-pack"],
)
def test_mismatched_payment_is_answered_200_recorded_and_grants_nothing(
    owner: Any, pack: str, cents: int, currency: str
) -> None:
    response = deliver(pack_event(owner, pack=pack, cents=cents, currency=currency))
    assert response.status_code == 200
    assert balance_and_ledger(owner.account) == (1000, 1000)
    assert StripeEvent.objects.get().outcome == "mismatched"
    assert not Payment.objects.exists()


def test_payment_for_an_unknown_account_grants_nothing(owner: Any) -> None:
    payload = event("payment_intent.succeeded", payment_intent(account="not-an-id", pack="pack_1k", cents=1000))
    assert deliver(payload).status_code == 200
    assert StripeEvent.objects.get().outcome == "mismatched"
    assert balance_and_ledger(owner.account) == (1000, 1000)


def test_unknown_event_type_is_recorded_and_ignored(owner: Any) -> None:
    assert deliver(event("charge.refunded", {"id": "ch_1"})).status_code == 200
    assert StripeEvent.objects.get().outcome == "ignored"


@pytest.mark.parametrize(
    "header",
    ["", "t=1,v1=00", "v1=deadbeef", "garbage"],
    ids=["empty", "wrong-digest", "no-timestamp", "garbage"],
)
def test_bad_signature_is_400_and_changes_nothing(owner: Any, header: str) -> None:
    body, _ = signed(pack_event(owner))
    response = Client().post(URL, data=body, content_type="application/json", headers={"Stripe-Signature": header})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_signature"
    assert balance_and_ledger(owner.account) == (1000, 1000)
    assert not StripeEvent.objects.exists()


def test_missing_signature_is_400(owner: Any) -> None:
    body, _ = signed(pack_event(owner))
    response = Client().post(URL, data=body, content_type="application/json")
    assert response.status_code == 400
    assert not StripeEvent.objects.exists()


def test_signature_with_another_secret_is_400(owner: Any) -> None:
    assert deliver(pack_event(owner), secret="whsec_someone_else").status_code == 400
    assert balance_and_ledger(owner.account) == (1000, 1000)


def test_signature_older_than_five_minutes_is_400(owner: Any) -> None:
    assert deliver(pack_event(owner), at=int(time.time()) - 301).status_code == 400
    assert deliver(pack_event(owner), at=int(time.time()) - 290).status_code == 200


def test_body_that_is_not_an_event_is_400(owner: Any) -> None:
    assert deliver({"hello": "world"}).status_code == 400


def test_without_stripe_the_webhook_does_not_exist(owner: Any, settings: Any) -> None:
    settings.STRIPE_SECRET_KEY = ""
    assert deliver(pack_event(owner)).status_code == 404
    assert balance_and_ledger(owner.account) == (1000, 1000)


def test_get_is_not_allowed(owner: Any) -> None:
    assert Client().get(URL).status_code == 405


def test_plan_invoice_grants_period_credits_and_sets_the_plan_once_for_paid_and_payment_succeeded(
    owner: Any,
) -> None:
    with_customer(owner.account)
    paid = invoice(customer="cus_test1", lines=[plan_line("pro", 9900)])
    deliver(event("invoice.payment_succeeded", paid))
    deliver(event("invoice.paid", paid))
    assert balance_and_ledger(owner.account) == (26_000, 26_000)
    owner.account.refresh_from_db()
    assert owner.account.plan.code == "pro"
    assert Payment.objects.get().kind == "plan"
    audited = AuditEvent.objects.filter(account=owner.account).values_list("action", "actor", "ip")
    assert sorted(audited) == [("credits_granted", None, None), ("plan_changed", None, None)]  # once each


def test_upgrade_invoice_grants_the_difference(owner: Any) -> None:
    with_customer(owner.account)
    deliver(event("invoice.paid", invoice(customer="cus_test1", lines=[plan_line("starter", 2900)], invoice_id="in_1")))
    upgrade = [plan_line("starter", 2900, amount=-2000), plan_line("pro", 9900)]
    deliver(event("invoice.paid", invoice(customer="cus_test1", lines=upgrade, invoice_id="in_2")))
    assert balance_and_ledger(owner.account) == (1000 + 5000 + 20_000,) * 2
    owner.account.refresh_from_db()
    assert owner.account.plan.code == "pro"


def test_reordered_invoices_leave_the_newer_plan(owner: Any) -> None:
    with_customer(owner.account)
    now = int(time.time())
    older = invoice(customer="cus_test1", lines=[plan_line("starter", 2900)], invoice_id="in_old", created=now - 60)
    newer = invoice(customer="cus_test1", lines=[plan_line("pro", 9900)], invoice_id="in_new", created=now)
    deliver(event("invoice.paid", newer))
    deliver(event("invoice.paid", older))
    owner.account.refresh_from_db()
    assert owner.account.plan.code == "pro"
    assert balance_and_ledger(owner.account) == (31_000, 31_000)


def test_invoice_of_an_unknown_customer_grants_nothing(owner: Any) -> None:
    deliver(event("invoice.paid", invoice(customer="cus_nobody", lines=[plan_line("pro", 9900)])))
    assert StripeEvent.objects.get().outcome == "mismatched"
    assert balance_and_ledger(owner.account) == (1000, 1000)


def test_invoice_for_a_plan_not_ours_grants_nothing(owner: Any) -> None:
    with_customer(owner.account)
    line = {**plan_line("pro", 9900), "plan": {"id": "someone-elses-plan"}}
    deliver(event("invoice.paid", invoice(customer="cus_test1", lines=[line])))
    assert StripeEvent.objects.get().outcome == "mismatched"
    assert owner.account.plan.code == "starter"


def test_deleted_subscription_moves_to_free_at_the_period_end(owner: Any) -> None:
    customer = with_customer(owner.account)
    ends = int(time.time()) + 3600
    subscription = {"id": "sub_test1", "object": "subscription", "customer": "cus_test1", "current_period_end": ends}
    deliver(event("customer.subscription.deleted", subscription))
    owner.account.refresh_from_db()
    assert owner.account.plan.code == "starter"  # paid until the period's end
    assert periods_expire() == 0
    with time_machine.travel(ends + 1):
        assert periods_expire() == 1
    owner.account.refresh_from_db()
    customer.refresh_from_db()
    assert (owner.account.plan.code, customer.pending_plan) == ("free", "")


def test_deleted_subscription_after_its_period_moves_to_free_at_once(owner: Any) -> None:
    with_customer(owner.account)
    subscription = {"id": "sub_test1", "customer": "cus_test1", "current_period_end": int(time.time()) - 5}
    deliver(event("customer.subscription.deleted", subscription))
    owner.account.refresh_from_db()
    assert owner.account.plan.code == "free"


def test_deleting_an_old_subscription_changes_nothing(owner: Any) -> None:
    with_customer(owner.account)
    deliver(event("customer.subscription.deleted", {"id": "sub_old", "customer": "cus_test1"}))
    owner.account.refresh_from_db()
    assert owner.account.plan.code == "starter"
    assert StripeEvent.objects.get().outcome == "mismatched"


def test_event_records_are_pruned_after_90_days_and_a_late_redelivery_still_grants_nothing(owner: Any) -> None:
    from lib.prune import prune_expired

    payload = pack_event(owner)
    deliver(payload)
    with time_machine.travel(time.time() + 91 * 86400):
        assert prune_expired()["StripeEvent"] == 1
    assert deliver(payload).status_code == 200
    assert balance_and_ledger(owner.account) == (11_000, 11_000)
    assert StripeEvent.objects.get().outcome == "already"


def test_invoice_in_stripes_newer_shape_grants_as_well(owner: Any) -> None:
    """API versions from 2025-03-31 name a line's price under `pricing` and the subscription under `parent`."""
    with_customer(owner.account)
    line = plan_line("pro", 9900)
    del line["plan"]
    line["pricing"] = {"type": "price_details", "price_details": {"price": "verifier-pro-9900-usd-month"}}
    paid = invoice(customer="cus_test1", lines=[line])
    del paid["subscription"]
    paid["parent"] = {"type": "subscription_details", "subscription_details": {"subscription": "sub_new"}}
    deliver(event("invoice.paid", paid))
    owner.account.refresh_from_db()
    assert (owner.account.plan.code, owner.account.credit_balance) == ("pro", 26_000)
    assert Customer.objects.get(account=owner.account).subscription_id == "sub_new"


def test_subscription_deleted_in_stripes_newer_shape_reads_the_period_end_from_its_item(owner: Any) -> None:
    with_customer(owner.account)
    ends = int(time.time()) + 3600
    subscription = {"id": "sub_test1", "customer": "cus_test1", "items": {"data": [{"current_period_end": ends}]}}
    deliver(event("customer.subscription.deleted", subscription))
    assert Customer.objects.get(account=owner.account).pending_plan == "free"
    owner.account.refresh_from_db()
    assert owner.account.plan.code == "starter"
