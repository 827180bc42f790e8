"""Auto-recharge: below the threshold the saved card buys the chosen pack off-session, at most once an
hour; a decline turns it off, is shown and emailed, and is never retried on its own."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from billing import payments, tasks
from billing.models import Customer, Payment
from billing.services import credits_spend
from tests.billing.conftest import balance_and_ledger, logged_in, save_card
from tests.support.localstripe import CARD_DECLINED_ON_CHARGE, LocalStripe

pytestmark = pytest.mark.usefixtures("stripe_live")


def with_recharge(owner: Any, stripe: LocalStripe, card: str = "4242424242424242", below: int = 500) -> Any:
    client = logged_in(owner)
    save_card(client, stripe, card)
    client.post("/billing/recharge", {"pack": "pack_1k", "below": str(below)})
    return client


def test_balance_above_the_threshold_buys_nothing(owner: Any, stripe_live: LocalStripe) -> None:
    with_recharge(owner, stripe_live)
    assert payments.recharges_due() == []


def test_balance_below_the_threshold_buys_the_pack_once_an_hour(owner: Any, stripe_live: LocalStripe) -> None:
    with_recharge(owner, stripe_live)
    credits_spend(account=owner.account, amount=600)
    claimed = payments.recharges_due()
    assert len(claimed) == 1
    tasks.recharge(claimed[0])
    assert balance_and_ledger(owner.account) == (1400, 1400)
    assert Payment.objects.get().off_session
    credits_spend(account=owner.account, amount=1000)  # below again at once
    assert payments.recharges_due() == []
    with time_machine.travel(timezone.now() + timedelta(minutes=61)):
        assert len(payments.recharges_due()) == 1


def test_a_declined_recharge_stops_is_shown_and_emailed(owner: Any, stripe_live: LocalStripe) -> None:
    client = with_recharge(owner, stripe_live, CARD_DECLINED_ON_CHARGE)
    credits_spend(account=owner.account, amount=600)
    tasks.recharge(payments.recharges_due()[0])
    assert balance_and_ledger(owner.account) == (400, 400)
    page = client.get("/billing").content.decode()
    assert "Auto-recharge of 1,000 credits ($10) failed: Your card was declined." in page
    [message] = mail.outbox
    assert (
        message.to == [owner.account.email]
        and "We tried to buy 1,000 credits ($10) with your saved card" in message.body
    )
    assert Customer.objects.get().recharge_pack == ""
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        assert payments.recharges_due() == []  # off until the customer turns it on again


def test_recharge_needs_a_saved_card(owner: Any) -> None:
    page = logged_in(owner).post("/billing/recharge", {"pack": "pack_1k", "below": "500"}, follow=True)
    assert "Save a card first." in page.content.decode()


def test_recharge_refuses_an_unknown_pack_or_a_bad_threshold(owner: Any, stripe_live: LocalStripe) -> None:
    client = with_recharge(owner, stripe_live)
    page = client.post("/billing/recharge", {"pack": "pack_7k", "below": "5"}, follow=True).content.decode()
    assert "There is no such pack or plan." in page
    page = client.post("/billing/recharge", {"pack": "pack_1k", "below": "lots"}, follow=True).content.decode()
    assert "The threshold must be a whole number of credits." in page
    assert Customer.objects.get().recharge_below == 500


def test_the_schedule_task_queues_one_charge_per_account_due(owner: Any, stripe_live: LocalStripe) -> None:
    with_recharge(owner, stripe_live)
    credits_spend(account=owner.account, amount=600)
    assert tasks.recharge_due() == 1
    assert tasks.recharge_due() == 0
