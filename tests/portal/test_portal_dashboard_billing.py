"""Dashboard (plan, balance, usage chart, jobs) and billing (plan, ledger)."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.urls import reverse
from django.utils import timezone

from billing.models import LedgerEntry
from billing.services import credits_grant, credits_release, credits_reserve, credits_spend
from tests.conftest import Persona
from tests.support.portal import logged_in


def test_dashboard_shows_plan_balance_and_usage(owner: Persona) -> None:
    owner.verify("jane@good.com")
    owner.verify("info@good.com")
    page = logged_in(owner).get(reverse("dashboard")).content.decode()
    assert "Starter" in page
    assert 'id="credit-balance">998<' in page
    assert "<svg" in page
    assert "2 in all" in page


def test_dashboard_has_an_empty_state_for_usage_and_jobs(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("dashboard")).content.decode()
    assert "No verifications in the last 30 days" in page
    assert "No jobs yet." in page


def test_daily_usage_counts_spends_and_bulk_rows_per_day(owner: Persona) -> None:
    account = owner.account
    now = timezone.now()
    with time_machine.travel(now - timedelta(days=2), tick=False):
        credits_spend(account=account)
    held, _ = credits_reserve(account=account, wanted=50, reference="job_x")
    credits_release(account=account, amount=held - 20, reference="job_x")
    credits_spend(account=account)
    usage = LedgerEntry.objects.daily_usage(account=account, days=30)
    assert len(usage) == 30
    assert usage[-1] == (timezone.localdate(), 21)
    assert usage[-3][1] == 1
    assert sum(value for _, value in usage) == 22


def test_daily_usage_ignores_grants_old_days_and_other_accounts(owner: Persona, outsider: Persona) -> None:
    with time_machine.travel(timezone.now() - timedelta(days=30), tick=False):
        credits_spend(account=owner.account)
    credits_spend(account=outsider.account)
    credits_grant(account=owner.account, amount=5)
    assert sum(value for _, value in LedgerEntry.objects.daily_usage(account=owner.account)) == 0


def test_billing_shows_what_the_plan_allows(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("billing")).content.decode()
    assert "Bulk list verification: <strong>yes</strong>" in page
    assert "20 requests/second" in page
    assert "Free" in page and "Enterprise" in page


def test_billing_ledger_is_paginated_newest_first(owner: Persona) -> None:
    for n in range(30):
        credits_grant(account=owner.account, amount=1, note=f"gift {n}")
    client = logged_in(owner)
    first = client.get(reverse("billing")).content.decode()
    second = client.get(reverse("billing"), {"page": 2}).content.decode()
    assert "gift 29" in first and "gift 4" not in first
    assert "gift 4" in second and "factory" in second
    assert "Page 2 of 2" in second


def test_billing_ledger_shows_only_own_entries(owner: Persona, outsider: Persona) -> None:
    credits_grant(account=outsider.account, amount=7, note="outsider gift")
    assert "outsider gift" not in logged_in(owner).get(reverse("billing")).content.decode()


def test_billing_says_whom_to_ask_for_credits(owner: Persona, settings: object) -> None:
    settings.BILLING_CONTACT_EMAIL = "sales@verifier.example"  # type: ignore[attr-defined]
    assert "mailto:sales@verifier.example" in logged_in(owner).get(reverse("billing")).content.decode()
