"""Billing's fixtures: Stripe settings pointing nowhere real, and a customer at "Stripe" for an account."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from django.db.models import Sum
from django.test import Client

from accounts.models import Account
from billing.models import Customer, LedgerEntry
from tests.conftest import Persona, make_persona
from tests.jobs.conftest import media, run_tasks  # noqa: F401  (a bulk job's answers, test_answer_batches.py)
from tests.support.localstripe import (
    LocalStripe,
    confirm_card_setup,
    running,
)
from tests.support.stripe_events import WEBHOOK_SECRET


@pytest.fixture
def stripe_on(settings: Any) -> Any:
    settings.STRIPE_SECRET_KEY = "sk_test_verifier"
    settings.STRIPE_PUBLISHABLE_KEY = "pk_test_verifier"
    settings.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET
    return settings


def with_customer(account: Account, stripe_id: str = "cus_test1") -> Customer:
    return Customer.objects.create(account=account, stripe_id=stripe_id, subscription_id="sub_test1")


def balance_and_ledger(account: Account) -> tuple[int, int]:
    account.refresh_from_db()
    total = LedgerEntry.objects.filter(account=account).aggregate(total=Sum("amount"))["total"] or 0
    return account.credit_balance, total


@pytest.fixture(scope="session")
def localstripe() -> Iterator[LocalStripe]:
    with running() as stripe:
        yield stripe


@pytest.fixture
def stripe_live(stripe_on: Any, localstripe: LocalStripe) -> LocalStripe:
    """Billing on, its Stripe calls answered by localstripe on loopback."""
    stripe_on.STRIPE_API_BASE = localstripe.url
    stripe_on.STRIPE_JS_URL = localstripe.js_url
    return localstripe


@pytest.fixture
def free_owner(db: None) -> Persona:
    return make_persona(plan_code="free", credits=1000)


def logged_in(persona: Persona) -> Client:
    persona.client.force_login(persona.account.owner)
    return persona.client


SECRET = re.compile(r'data-client-secret="(seti_\w+_secret_\w+)"')


def save_card(client: Client, stripe: LocalStripe, number: str = "4242424242424242", pack: str = "") -> Any:
    page = client.get("/billing/card" + (f"?pack={pack}" if pack else ""))
    secret = SECRET.search(page.content.decode()).group(1)
    confirmed = confirm_card_setup(stripe, secret, number)
    form = {"setup_intent": confirmed.get("id", ""), "pack": pack, "purchase_key": "k1"}
    return client.post("/billing/card", form, follow=True)


def point_webhook_at(stripe: LocalStripe, url: str, secret: str, events: list[str] | None = None) -> None:
    """localstripe's webhook configuration: it then POSTs its events to `url`, signed with `secret`."""
    body = json.dumps({"url": url, "secret": secret, "events": events}).encode()
    urllib.request.urlopen(urllib.request.Request(f"{stripe.url}/_config/webhooks/verifier", data=body), timeout=10)


@pytest.fixture
def webhook_to_live_server(stripe_live: LocalStripe, live_server: Any, settings: Any) -> Iterator[None]:
    point_webhook_at(stripe_live, f"{live_server.url}/webhooks/stripe", settings.STRIPE_WEBHOOK_SECRET)
    yield
    # localstripe outlives this test: send the live server nothing more (no event type is in []).
    point_webhook_at(stripe_live, f"{live_server.url}/webhooks/stripe", settings.STRIPE_WEBHOOK_SECRET, events=[])
