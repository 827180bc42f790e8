"""The business's figures for the staff dashboard, each a single query over an indexed time range.

Usage comes from the credit ledger, the one record of every address verified: a single
verification is a spend of 1, bulk rows are reservations minus releases (billing/models.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Count, Q, Sum
from django.utils import timezone

from accounts.models import Account
from billing.models import LedgerEntry, Payment, StripeEvent
from lib import sql
from lib.money import dollars

Kind = LedgerEntry.Kind
SINGLE = Q(kind=Kind.SPEND)
BULK = Q(kind__in=[Kind.RESERVATION, Kind.RELEASE])
USAGE = Q(kind__in=LedgerEntry.USAGE_KINDS)
WINDOWS = {"today": 0, "week": 6, "month": 29}  # days before today that each window starts


def window_start(days_back: int) -> datetime:
    return timezone.make_aware(datetime.combine(timezone.localdate() - timedelta(days=days_back), datetime.min.time()))


@dataclass(frozen=True)
class Usage:
    single: int
    bulk: int
    granted: int
    since: datetime

    @property
    def verified(self) -> int:
        return self.single + self.bulk


def usage(days: Sequence[tuple[date, int, int, int]]) -> dict[str, Usage]:
    """Addresses verified (single, bulk) and credits granted today and over 7 and 30 days, from `daily`."""
    assert len(days) > WINDOWS["month"]
    return {name: _window(days[-back - 1 :], window_start(back)) for name, back in WINDOWS.items()}


def _window(days: Sequence[tuple[date, int, int, int]], since: datetime) -> Usage:
    return Usage(sum(d[1] for d in days), sum(d[2] for d in days), sum(d[3] for d in days), since)


def _day(column: str) -> str:
    """The UTC date of a timestamp column, in SQL each database runs without a call out to Python."""
    if sql.is_postgresql():
        return f"({column} AT TIME ZONE 'UTC')::date"
    return f"substr({column}, 1, 10)"  # SQLite: Django stores UTC as 'YYYY-MM-DD HH:MM:SS'


def daily(days: int = 30) -> list[tuple[date, int, int, int]]:
    """(day, single, bulk, granted) for each of the last `days` days, oldest first, empty days included.

    One scan of the time range (ledger_usage_idx). Grouped by a date computed in SQL: Django's
    TruncDate would cast each row's timestamp in Python on SQLite, a second for a busy month.
    """
    rows = sql.fetch_all(
        f"SELECT {_day('created_at')} AS day, -SUM(CASE WHEN kind = %s THEN amount ELSE 0 END),"
        f" -SUM(CASE WHEN kind IN (%s, %s) THEN amount ELSE 0 END), SUM(CASE WHEN kind = %s THEN amount ELSE 0 END)"
        f" FROM {sql.table(LedgerEntry)} WHERE created_at >= %s GROUP BY {_day('created_at')}",
        [Kind.SPEND, Kind.RESERVATION, Kind.RELEASE, Kind.GRANT, window_start(days - 1)],
    )
    found = {str(day): (int(single), int(bulk), int(granted)) for day, single, bulk, granted in rows}
    first = timezone.localdate() - timedelta(days=days - 1)
    return [(day, *found.get(day.isoformat(), (0, 0, 0))) for day in (first + timedelta(days=n) for n in range(days))]


def signups() -> dict[str, int]:
    counts = {name: Count("id", filter=Q(created_at__gte=window_start(back))) for name, back in WINDOWS.items()}
    return Account.objects.aggregate(**counts, total=Count("id"))


def active_accounts(days: int = 30) -> int:
    row = sql.fetch_one(
        f"SELECT COUNT(DISTINCT account_id + 0) FROM {sql.table(LedgerEntry)} WHERE {_RECENT_USAGE}",
        [*LedgerEntry.USAGE_KINDS, window_start(days - 1)],
    )
    return int(row[0]) if row else 0


def plan_mix() -> list[Mapping[str, Any]]:
    return list(
        Account.objects.values("plan_id", "plan__name").annotate(accounts=Count("id")).order_by("plan__sort_order")
    )


# `account_id + 0`, not `account_id`: grouped by the bare column, SQLite walks the whole ledger in
# account order (its account index) instead of the time range (ledger_usage_idx): seconds, not ms.
_RECENT_USAGE = "kind IN (%s, %s, %s) AND created_at >= %s"
_USAGE_BY_ACCOUNT = (
    "SELECT u.account_id, u.used, a.credit_balance, o.email FROM"
    " (SELECT account_id + 0 AS account_id, -SUM(amount) AS used FROM {ledger} WHERE {recent}"
    " GROUP BY account_id + 0) u"
    " JOIN {account} a ON a.id = u.account_id {person}"
    " WHERE u.used > 0{having} ORDER BY {order}, u.account_id LIMIT %s"
)


@dataclass(frozen=True)
class AccountUsage:
    account_id: int
    used: int
    balance: int
    email: str


def _usage_by_account(*, days: int, order: str, limit: int, short_by: int | None = None) -> list[AccountUsage]:
    """Accounts by credits used over `days` days; with `short_by`, only those whose balance is under
    `used / short_by` (will not last a day when short_by is the number of days)."""
    query = _USAGE_BY_ACCOUNT.format(
        ledger=sql.table(LedgerEntry),
        account=sql.table(Account),
        person=Account.objects.person_join_sql("a", "o"),
        recent=_RECENT_USAGE,
        having=" AND u.used > a.credit_balance * %s" if short_by else "",
        order=order,
    )
    since = timezone.now() - timedelta(days=days)
    rows = sql.fetch_all(query, [*LedgerEntry.USAGE_KINDS, since, *([short_by] if short_by else []), limit])
    return [AccountUsage(int(a), int(u), int(b), e) for a, u, b, e in rows]


def top_accounts(days: int = 30, limit: int = 10) -> list[AccountUsage]:
    return _usage_by_account(days=days, order="u.used DESC", limit=limit)


def running_out(days: int = 7, limit: int = 10) -> list[AccountUsage]:
    """Accounts whose balance will not last a day at their average daily use over the last `days` days."""
    return _usage_by_account(days=days, order="a.credit_balance", limit=limit, short_by=days)


@dataclass(frozen=True)
class Revenue:
    cents: int
    failed: int
    since: datetime

    @property
    def amount(self) -> str:
        return dollars(self.cents)


def revenue() -> dict[str, Revenue]:
    """Card payments taken (packs and plan invoices) and payments failed, today and over 7 and 30 days."""
    paid, failed = Q(status=Payment.Status.SUCCEEDED), Q(status=Payment.Status.FAILED)
    sums: dict[str, Any] = {}
    for name, back in WINDOWS.items():
        since = Q(created_at__gte=window_start(back))
        sums[f"{name}_cents"] = Sum("cents", filter=paid & since, default=0)
        sums[f"{name}_failed"] = Count("id", filter=failed & since)
    row = Payment.objects.aggregate(**sums)
    return {
        name: Revenue(row[f"{name}_cents"], row[f"{name}_failed"], window_start(back)) for name, back in WINDOWS.items()
    }


def payment_problems(limit: int = 10) -> dict[str, Any]:
    """The latest failed payments, and Stripe events that granted nothing because they did not match."""
    failed = Payment.objects.filter(status=Payment.Status.FAILED).select_related(
        *(f"account__{related}" for related in Account.DISPLAY_RELATED)
    )[:limit]
    mismatched = StripeEvent.objects.filter(outcome=StripeEvent.Outcome.MISMATCHED)[:limit]
    return {"failed_payments": list(failed), "mismatched_events": list(mismatched)}
