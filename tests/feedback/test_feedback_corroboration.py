"""Corroboration that a sign-up cannot buy: across accounts, a hard bounce counts only from reporters that
have paid at least once, or that reported it as an authenticated event of their sending service."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from billing.models import Payment
from tests.conftest import Persona, make_persona
from tests.support.esp_events import MAILGUN_KEY, mailgun_failure, mailgun_key_set, mailgun_post, mailgun_signed

pytestmark = pytest.mark.django_db
ADDRESS = "jane@good.com"


def free_account() -> Persona:
    return make_persona(plan_code="free", credits=100)


def paid_once(persona: Persona) -> Persona:
    """A free account that bought a pack once."""
    Payment.objects.create(
        account=persona.account,
        stripe_id=f"pi_{persona.account.pk}",
        kind=Payment.Kind.PACK,
        product="pack_1k",
        credits=1000,
        cents=1000,
        currency="usd",
        status=Payment.Status.SUCCEEDED,
    )
    return persona


def self_reported_bounce(persona: Persona) -> None:
    when = (timezone.now() - timedelta(days=1)).isoformat()
    event = {"email": ADDRESS, "outcome": "hard_bounce", "occurred_at": when}
    assert persona.post_json("/v1/feedback", {"events": [event]}).json()["accepted"] == 1


def signed_mailgun_bounce(persona: Persona) -> None:
    mailgun_key_set(persona.account)
    body = mailgun_signed(mailgun_failure(ADDRESS, time.time() - 3600), MAILGUN_KEY)
    assert mailgun_post(persona.account, body).json() == {"accepted": 1, "ignored": 0}


def answer(persona: Persona) -> tuple[Any, Any]:
    body = persona.verify(ADDRESS).json()
    return body["status"], (body["feedback"] or {}).get("outcome")


def test_two_free_accounts_self_reported_bounces_change_no_other_accounts_verdict() -> None:
    third = make_persona(plan_code="starter", credits=100)
    first, second = free_account(), free_account()
    self_reported_bounce(first)
    self_reported_bounce(second)
    assert answer(third) == ("valid", None)


def test_free_accounts_reports_still_teach_their_own_verdicts() -> None:
    first, second = free_account(), free_account()
    self_reported_bounce(first)
    self_reported_bounce(second)
    assert answer(first) == ("invalid", "hard_bounce")


def test_two_accounts_that_paid_once_still_change_everyones_verdict() -> None:
    third = make_persona(plan_code="starter", credits=100)
    self_reported_bounce(paid_once(free_account()))
    self_reported_bounce(paid_once(free_account()))
    assert answer(third) == ("invalid", "hard_bounce")


def test_one_paying_and_one_free_reporter_are_not_two(owner: Persona) -> None:
    third = make_persona(plan_code="starter", credits=100)
    self_reported_bounce(owner)
    self_reported_bounce(free_account())
    assert answer(third) == ("valid", None)


def test_free_accounts_authenticated_esp_bounces_still_count_for_everyone() -> None:
    third = make_persona(plan_code="starter", credits=100)
    signed_mailgun_bounce(free_account())
    signed_mailgun_bounce(free_account())
    assert answer(third) == ("invalid", "hard_bounce")


def test_an_unsigned_webhook_of_a_free_account_is_not_vouched_for() -> None:
    third = make_persona(plan_code="starter", credits=100)
    unsigned = free_account()
    mailgun_post(unsigned.account, mailgun_failure(ADDRESS, time.time() - 3600))
    signed_mailgun_bounce(free_account())
    assert answer(third) == ("valid", None)
