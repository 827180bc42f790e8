"""The business's figures for the staff dashboard, each one scan of an indexed time range.

In the ORM, but for the accounts by usage (top users, running out), written out in SQL where the
figures beside it show why.

Usage comes from the credit ledger, the one record of every address verified: a single
verification is a spend of 1, bulk rows are reservations minus releases (billing/models.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Count, DateField, ExpressionWrapper, F, IntegerField, Q, QuerySet, Sum
from django.db.models.functions import Cast
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


def daily(days: int = 30) -> list[tuple[date, int, int, int]]:
    """(day, single, bulk, granted) for each of the last `days` days, oldest first, empty days included.

    One scan of the time range (ledger_usage_idx). Grouped by a cast to date, which each database
    computes itself (SQLite's date(), PostgreSQL's ::date in the connection's UTC): Django's
    TruncDate would call out to Python for each row on SQLite, a second for a busy month. Against
    the hand-written SQL it replaced, on the volume test's million ledger rows (median of 3, min-max):
    SQLite 71 ms (61-77) against 67 ms (60-71), load 6.4; PostgreSQL 53 ms (50-58) against 53 ms
    (50-59), load 5.8.
    """
    rows = (
        LedgerEntry.objects.filter(created_at__gte=window_start(days - 1))
        .annotate(day=Cast("created_at", DateField()))
        .values("day")
        .annotate(
            single=-Sum("amount", filter=SINGLE, default=0),
            bulk=-Sum("amount", filter=BULK, default=0),
            granted=Sum("amount", filter=Q(kind=Kind.GRANT), default=0),
        )
        .order_by()
        .values_list("day", "single", "bulk", "granted")
    )
    found = {str(day): (int(single), int(bulk), int(granted)) for day, single, bulk, granted in rows}
    first = timezone.localdate() - timedelta(days=days - 1)
    return [(day, *found.get(day.isoformat(), (0, 0, 0))) for day in (first + timedelta(days=n) for n in range(days))]


def signups() -> dict[str, int]:
    counts = {name: Count("id", filter=Q(created_at__gte=window_start(back))) for name, back in WINDOWS.items()}
    return Account.objects.aggregate(**counts, total=Count("id"))


def active_accounts(days: int = 30) -> int:
    return _recent_usage(window_start(days - 1)).aggregate(n=Count(ACCOUNT_ID, distinct=True))["n"]


def _recent_usage(since: datetime) -> QuerySet[LedgerEntry]:
    return LedgerEntry.objects.filter(USAGE, created_at__gte=since)


def plan_mix() -> list[Mapping[str, Any]]:
    return list(
        Account.objects.values("plan_id", "plan__name").annotate(accounts=Count("id")).order_by("plan__sort_order")
    )


# `account_id + 0`, not `account_id`: grouped by the bare column, SQLite walks the whole ledger in
# account order (its account index) instead of the time range (ledger_usage_idx): seconds, not ms.
ACCOUNT_ID = ExpressionWrapper(F("account_id") + 0, output_field=IntegerField())

# The accounts by usage are the one report in SQL written out: the ORM cannot join a grouped
# subquery, and the join it can write (the ledger grouped by account, with the account's balance
# and email) lets SQLite walk the ledger in account order. Measured on the volume test's million
# ledger rows (tests/ops/test_dashboard_volume.py), median of 3 (min-max), 1-minute load, 2026-11-26:
# - top_accounts, SQLite: this SQL 37 ms (35-38), the ORM's join 3,180 ms (2,797-3,511), load 6.7;
#   PostgreSQL: 20 ms (20-28) against 86 ms (73-88), load 5.8.
# - the balance and email as correlated subqueries of the ORM's grouping, PostgreSQL: running_out
#   585 ms (497-637) against 18 ms (16-20), top_accounts 219 ms (126-236) against 86 ms (65-89),
#   load 9.8; the dashboard's planned cost 7.2 passes over the ledger, its budget 1.9.
# Two ORM queries (the grouping, then the accounts by id) cost about the same as this one, but add
# two queries to every dashboard and send every active account's id back as a parameter.
_RECENT_USAGE = f"kind IN ({sql.placeholders(len(LedgerEntry.USAGE_KINDS))}) AND created_at >= %s"
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
    params = [*LedgerEntry.USAGE_KINDS, sql.db_datetime(since), *([short_by] if short_by else []), limit]
    rows = sql.fetch_all(query, params)
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
