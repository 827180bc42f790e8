"""README, "Plans, keys, credits": the ledger and the balance, also under concurrency."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import Sum

from accounts.models import Account
from billing.models import LedgerEntry
from billing.services import InsufficientCredits, credits_grant, credits_release, credits_reserve, credits_spend
from tests.factories import AccountFactory
from tests.support.db import committed_db
from tests.support.threads import run_at_once


def ledger_sum(account: Account) -> int:
    return LedgerEntry.objects.filter(account=account).aggregate(s=Sum("amount"))["s"] or 0


@pytest.mark.django_db
def test_spend_grant_reserve_release_keep_balance_equal_to_ledger() -> None:
    account = AccountFactory(credits=10)
    credits_spend(account=account, amount=3)
    held, _ = credits_reserve(account=account, wanted=5, reference="job_1:chunk:0")
    credits_release(account=account, amount=2, reference="job_1:chunk:0")
    credits_grant(account=account, amount=7, note="top-up")
    account.refresh_from_db()
    assert held == 5
    assert account.credit_balance == 10 - 3 - 5 + 2 + 7 == ledger_sum(account)


@pytest.mark.django_db
def test_reservation_takes_what_is_left_when_short() -> None:
    account = AccountFactory(credits=4)
    held, balance = credits_reserve(account=account, wanted=10, reference="job")
    assert (held, balance) == (4, 0)
    assert credits_reserve(account=account, wanted=10, reference="job") == (0, 0)


@pytest.mark.django_db
def test_spend_never_goes_below_zero() -> None:
    account = AccountFactory(credits=1)
    credits_spend(account=account)
    with pytest.raises(InsufficientCredits):
        credits_spend(account=account)
    account.refresh_from_db()
    assert account.credit_balance == 0 == ledger_sum(account)


@pytest.mark.django_db
def test_grant_must_be_positive() -> None:
    with pytest.raises(ValueError):
        credits_grant(account=AccountFactory(credits=0), amount=0)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locking is a PostgreSQL property")
@committed_db
def test_twenty_concurrent_spends_against_ten_credits_on_postgresql() -> None:
    account = AccountFactory(credits=10)

    def spend() -> bool:
        try:
            credits_spend(account=Account.objects.get(pk=account.pk))
        except InsufficientCredits:
            return False
        return True

    outcomes = run_at_once(20, spend)
    account.refresh_from_db()
    assert outcomes.count(True) == 10
    assert account.credit_balance == 0 == ledger_sum(account)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locking is a PostgreSQL property")
@committed_db
def test_concurrent_reservations_never_overdraw_on_postgresql() -> None:
    account = AccountFactory(credits=100)
    held = run_at_once(
        8, lambda: credits_reserve(account=Account.objects.get(pk=account.pk), wanted=30, reference="job")[0]
    )
    account.refresh_from_db()
    assert sum(held) == 100
    assert account.credit_balance == 0 == ledger_sum(account)
