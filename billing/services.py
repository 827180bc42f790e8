"""Credit movements. Every change to a balance writes a ledger entry in the same
transaction, so the balance always equals the sum of the ledger."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from accounts.models import Account
from billing.models import LedgerEntry
from lib import sql
from lib.errors import DomainError


class InsufficientCredits(DomainError):
    code = "insufficient_credits"
    message = "Your credit balance cannot pay for this request."


def credits_require(*, account: Account, amount: int = 1) -> None:
    """Refuse early, before any work, when the balance cannot pay `amount`.

    The one place a request's affordability is judged; the charge itself (`_move`) stays
    the guarantee, since the balance may move between this check and the charge.
    """
    if account.credit_balance < amount:
        raise InsufficientCredits


def credits_spend(*, account: Account, amount: int = 1, reference: str = "") -> int:
    """Take `amount` credits or raise InsufficientCredits; returns the new balance."""
    return _move(account, -amount, LedgerEntry.Kind.SPEND, reference)


def credits_reserve(*, account: Account, wanted: int, reference: str, note: str = "") -> tuple[int, int]:
    """Hold up to `wanted` credits (fewer if the balance is lower). Returns (held, balance)."""
    with transaction.atomic():
        balance = Account.objects.select_for_update().values_list("credit_balance", flat=True).get(pk=account.pk)
        held = min(wanted, balance)
        if held <= 0:
            return 0, balance
        return held, _move(account, -held, LedgerEntry.Kind.RESERVATION, reference, note)


def credits_release(*, account: Account, amount: int, reference: str, note: str = "") -> int:
    """Give back the unused part of a reservation."""
    if amount <= 0:
        return current_balance(account)
    return _move(account, amount, LedgerEntry.Kind.RELEASE, reference, note)


def credits_refund(*, account: Account, amount: int, reference: str, note: str = "") -> int:
    """Give back credits spent on answers the operator does not charge for (a bulk job's unknown rows)."""
    if amount <= 0:
        return current_balance(account)
    return _move(account, amount, LedgerEntry.Kind.REFUND, reference, note)


def credits_guarantee_refund(*, account: Account, reference: str, note: str) -> int:
    """Give back the credit of a charged valid answer that bounced (billing/guarantee.py)."""
    return _move(account, 1, LedgerEntry.Kind.GUARANTEE_REFUND, reference, note)


def credits_grant(*, account: Account, amount: int, note: str = "", reference: str = "") -> int:
    if amount <= 0:
        raise ValueError("a grant must be positive")
    return _move(account, amount, LedgerEntry.Kind.GRANT, reference, note)


def current_balance(account: Account) -> int:
    return Account.objects.values_list("credit_balance", flat=True).get(pk=account.pk)


def _move(account: Account, amount: int, kind: str, reference: str, note: str = "") -> int:
    """Add `amount` (negative takes) and write its ledger entry, at once; returns the new balance.

    Raises InsufficientCredits, changing nothing, if the balance would go below zero. The
    conditional UPDATE is atomic, so concurrent spends never overdraw. Hand-written SQL
    (lib/sql.py): every single verification pays through here.
    """
    with transaction.atomic(savepoint=False):
        row = sql.fetch_one(
            f"UPDATE {sql.table(Account)} SET credit_balance = credit_balance + %s"
            f" WHERE id = %s AND credit_balance + %s >= 0 RETURNING credit_balance",
            [amount, account.pk, amount],
        )
        if row is not None:
            sql.execute(
                f"INSERT INTO {sql.table(LedgerEntry)}"
                f" (account_id, kind, amount, balance_after, reference, note, created_at)"
                f" VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [account.pk, kind, amount, row[0], reference, note, sql.db_datetime(timezone.now())],
            )
    if row is None:  # raised outside the block: the refused UPDATE changed nothing to roll back
        raise InsufficientCredits
    account.credit_balance = int(row[0])
    return account.credit_balance


OPENING_NOTE = "Opening balance"
