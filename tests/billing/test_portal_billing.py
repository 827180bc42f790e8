"""The portal's billing with Stripe (localstripe on loopback): save a card, buy a pack, switch plan."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.test import Client

from billing import gateway, subscriptions
from billing.models import Customer, Payment
from tests.billing.conftest import SECRET, balance_and_ledger, logged_in, save_card
from tests.support.localstripe import CARD_DECLINED_ON_CHARGE, CARD_DECLINED_ON_SAVE, LocalStripe, confirm_card_setup
from tests.support.stripe_events import event, signed

pytestmark = pytest.mark.usefixtures("stripe_live")


def test_card_page_loads_stripe_js_from_its_setting(owner: Any, stripe_live: LocalStripe) -> None:
    page = logged_in(owner).get("/billing/card")
    assert f'<script src="{stripe_live.js_url}"></script>' in page.content.decode()
    assert stripe_live.url in page["Content-Security-Policy"]


def test_saving_a_card_shows_it(owner: Any, stripe_live: LocalStripe) -> None:
    page = save_card(logged_in(owner), stripe_live)
    assert "Card saved: visa •••• 4242" in page.content.decode()
    assert "visa •••• 4242" in owner.client.get("/billing").content.decode()


def test_entering_a_card_and_paying_buys_the_pack(owner: Any, stripe_live: LocalStripe) -> None:
    page = save_card(logged_in(owner), stripe_live, pack="pack_10k")
    assert page.redirect_chain[-1][0] == "/dashboard"
    assert "10,000 credits added ($70.00)" in page.content.decode()
    assert balance_and_ledger(owner.account) == (11_000, 11_000)


def test_buying_with_the_saved_card_then_webhook_grants_once(owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(owner)
    save_card(client, stripe_live)
    client.post("/billing/packs/pack_1k", {"purchase_key": "a"})
    payment = Payment.objects.get(account=owner.account)
    intent = {"id": payment.stripe_id, "object": "payment_intent", "amount": 1000, "amount_received": 1000}
    intent |= {"currency": "usd", "status": "succeeded", "metadata": {"account": str(owner.account.public_id)}}
    intent["metadata"]["pack"] = "pack_1k"
    body, header = signed(event("payment_intent.succeeded", intent))
    Client().post("/webhooks/stripe", body, content_type="application/json", headers={"Stripe-Signature": header})
    assert balance_and_ledger(owner.account) == (2000, 2000)


def test_a_declined_card_is_refused_when_saved(owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(owner)
    page = client.get("/billing/card")
    confirmed = confirm_card_setup(stripe_live, SECRET.search(page.content.decode()).group(1), CARD_DECLINED_ON_SAVE)
    assert confirmed["error"]["message"] == "Your card was declined."


def test_a_declined_charge_grants_nothing_and_says_why(owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(owner)
    save_card(client, stripe_live, CARD_DECLINED_ON_CHARGE)
    page = client.post("/billing/packs/pack_1k", {"purchase_key": "b"}, follow=True)
    assert "The payment failed: Your card was declined." in page.content.decode()
    assert balance_and_ledger(owner.account) == (1000, 1000)
    assert Payment.objects.get(account=owner.account).status == "failed"


def test_buying_without_a_card_asks_for_one(owner: Any) -> None:
    response = logged_in(owner).post("/billing/packs/pack_1k", {"purchase_key": "c"})
    assert response["Location"] == "/billing/card?pack=pack_1k"


def test_an_unknown_pack_is_refused(owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(owner)
    save_card(client, stripe_live)
    page = client.post("/billing/packs/pack_2k", {"purchase_key": "d"}, follow=True)
    assert "There is no such pack or plan." in page.content.decode()
    assert not Payment.objects.exists()


def test_subscribing_upgrading_and_downgrading(free_owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(free_owner)
    save_card(client, stripe_live)
    page = client.post("/billing/plan", {"plan": "starter", "confirm": "yes"}, follow=True)
    assert "You are on Starter now." in page.content.decode()
    assert balance_and_ledger(free_owner.account) == (6000, 6000)
    client.post("/billing/plan", {"plan": "pro", "confirm": "yes"})
    free_owner.account.refresh_from_db()
    assert free_owner.account.plan.code == "pro"
    assert balance_and_ledger(free_owner.account) == (26_000, 26_000)  # pro's 25,000 less starter's 5,000
    page = client.post("/billing/plan", {"plan": "starter", "confirm": "yes"}, follow=True)
    assert "You move to Starter when the paid period ends." in page.content.decode()
    free_owner.account.refresh_from_db()
    assert free_owner.account.plan.code == "pro"
    assert page.content.decode().count('data-payment="succeeded"') == 2  # the two invoices, listed


def test_switching_plan_without_a_card_asks_for_one(free_owner: Any) -> None:
    page = logged_in(free_owner).post("/billing/plan", {"plan": "pro", "confirm": "yes"}, follow=True)
    assert "Save a card first." in page.content.decode()
    free_owner.account.refresh_from_db()
    assert free_owner.account.plan.code == "free"


def test_cancelling_keeps_the_plan_until_the_period_ends(free_owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(free_owner)
    save_card(client, stripe_live)
    client.post("/billing/plan", {"plan": "starter", "confirm": "yes"})
    page = client.post("/billing/plan", {"plan": "free", "confirm": "yes"}, follow=True)
    assert "Your plan ends with the paid period; then you are on Free." in page.content.decode()
    free_owner.account.refresh_from_db()
    assert free_owner.account.plan.code == "starter"


def test_an_outsider_never_sees_the_owners_payments(owner: Any, outsider: Any, stripe_live: LocalStripe) -> None:
    save_card(logged_in(owner), stripe_live, pack="pack_1k")
    page = logged_in(outsider).get("/billing").content.decode()
    assert "No payments yet." in page
    assert "4242" not in page


def test_a_downgrade_starts_the_cheaper_plan_when_the_paid_one_ends(free_owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(free_owner)
    save_card(client, stripe_live)
    client.post("/billing/plan", {"plan": "pro", "confirm": "yes"})
    client.post("/billing/plan", {"plan": "starter", "confirm": "yes"})
    customer = Customer.objects.get(account=free_owner.account)
    assert customer.pending_plan == "starter"
    ended = {"id": customer.subscription_id, "customer": customer.stripe_id, "current_period_end": int(time.time()) - 1}
    body, header = signed(event("customer.subscription.deleted", ended))
    Client().post("/webhooks/stripe", body, content_type="application/json", headers={"Stripe-Signature": header})
    assert subscriptions.periods_expire() == 1
    free_owner.account.refresh_from_db()
    customer.refresh_from_db()
    assert (free_owner.account.plan.code, customer.subscription_plan, customer.pending_plan) == (
        "starter",
        "starter",
        "",
    )
    assert customer.subscription_id not in ("", ended["id"])
    assert balance_and_ledger(free_owner.account) == (1000 + 25_000 + 5_000,) * 2


def test_a_declined_card_leaves_the_plan_as_it_was(free_owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(free_owner)
    save_card(client, stripe_live, CARD_DECLINED_ON_CHARGE)
    page = client.post("/billing/plan", {"plan": "starter", "confirm": "yes"}, follow=True).content.decode()
    assert "declined" in page
    free_owner.account.refresh_from_db()
    assert free_owner.account.plan.code == "free"
    assert Customer.objects.get(account=free_owner.account).subscription_id == ""
    assert balance_and_ledger(free_owner.account) == (1000, 1000)


def test_a_card_saved_by_another_account_cannot_be_taken(owner: Any, outsider: Any, stripe_live: LocalStripe) -> None:
    page = logged_in(outsider).get("/billing/card")
    theirs = confirm_card_setup(stripe_live, SECRET.search(page.content.decode()).group(1))
    logged_in(owner).get("/billing/card")  # the owner is a customer too
    response = owner.client.post("/billing/card", {"setup_intent": theirs["id"]}, follow=True)
    assert "The card was not saved" in response.content.decode()
    assert Customer.objects.get(account=owner.account).card_payment_method == ""


def test_an_upgrade_with_a_declined_card_keeps_the_old_plan_here_and_at_stripe(
    free_owner: Any, stripe_live: LocalStripe
) -> None:
    client = logged_in(free_owner)
    save_card(client, stripe_live)
    client.post("/billing/plan", {"plan": "starter", "confirm": "yes"})
    save_card(client, stripe_live, CARD_DECLINED_ON_CHARGE)  # the new default card
    page = client.post("/billing/plan", {"plan": "pro", "confirm": "yes"}, follow=True).content.decode()
    assert "The card was declined; the plan did not change." in page
    free_owner.account.refresh_from_db()
    assert free_owner.account.plan.code == "starter"
    assert balance_and_ledger(free_owner.account) == (6000, 6000)
    customer = Customer.objects.get(account=free_owner.account)
    at_stripe = gateway.client().v1.subscriptions.retrieve(customer.subscription_id).to_dict()
    assert at_stripe["items"]["data"][0]["plan"]["id"] == "verifier-starter-2900-usd-month"


def test_only_a_stand_in_on_this_machine_is_spared_stripes_card_only_parameter(settings: Any) -> None:
    from billing.gateway import api_is_stand_in

    for base, stand_in in [("http://127.0.0.1:8420", True), ("http://localhost:8420", True), ("", False)]:
        settings.STRIPE_API_BASE = base
        assert api_is_stand_in() is stand_in
    settings.STRIPE_API_BASE = "https://api.stripe.com"
    assert not api_is_stand_in()
