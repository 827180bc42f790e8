"""Credit movements. Every change to a balance writes a ledger entry in the same
transaction, so the balance always equals the sum of the ledger."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F

from accounts.models import Account
from billing.models import LedgerEntry
from lib.errors import ApiError


class InsufficientCredits(ApiError):
    def __init__(self) -> None:
        super().__init__(402, "insufficient_credits", "Your credit balance cannot pay for this request.")


def credits_spend(*, account: Account, amount: int = 1, reference: str = "") -> int:
    """Take `amount` credits or raise InsufficientCredits; returns the new balance."""
    with transaction.atomic():
        won = Account.objects.filter(pk=account.pk, credit_balance__gte=amount).update(
            credit_balance=F("credit_balance") - amount
        )
        if not won:
            raise InsufficientCredits
        return _record(account, LedgerEntry.Kind.SPEND, -amount, reference)


def credits_reserve(*, account: Account, wanted: int, reference: str) -> tuple[int, int]:
    """Hold up to `wanted` credits (fewer if the balance is lower). Returns (held, balance)."""
    with transaction.atomic():
        balance = Account.objects.select_for_update().values_list("credit_balance", flat=True).get(pk=account.pk)
        held = min(wanted, balance)
        if held <= 0:
            return 0, balance
        Account.objects.filter(pk=account.pk).update(credit_balance=F("credit_balance") - held)
        return held, _record(account, LedgerEntry.Kind.RESERVATION, -held, reference)


def credits_release(*, account: Account, amount: int, reference: str) -> int:
    """Give back the unused part of a reservation."""
    if amount <= 0:
        return current_balance(account)
    with transaction.atomic():
        Account.objects.filter(pk=account.pk).update(credit_balance=F("credit_balance") + amount)
        return _record(account, LedgerEntry.Kind.RELEASE, amount, reference)


def credits_grant(*, account: Account, amount: int, note: str = "", reference: str = "") -> int:
    if amount <= 0:
        raise ValueError("a grant must be positive")
    with transaction.atomic():
        Account.objects.filter(pk=account.pk).update(credit_balance=F("credit_balance") + amount)
        return _record(account, LedgerEntry.Kind.GRANT, amount, reference, note)


def current_balance(account: Account) -> int:
    return Account.objects.values_list("credit_balance", flat=True).get(pk=account.pk)


def _record(account: Account, kind: str, amount: int, reference: str, note: str = "") -> int:
    balance = current_balance(account)
    LedgerEntry.objects.create(
        account=account, kind=kind, amount=amount, balance_after=balance, reference=reference, note=note
    )
    account.credit_balance = balance
    return balance
