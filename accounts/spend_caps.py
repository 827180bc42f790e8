"""Spend caps: the credits one API key may spend in a UTC day and in a calendar month
(docs/keys.md, "Spend caps").

Each key keeps what it spent in its latest day and month on its own row. A charge counts there
with one conditional UPDATE, in the transaction that takes the credits: the row count says
whether it fitted, so parallel requests on a key with 10 left charge exactly 10, on SQLite and
PostgreSQL alike (PostgreSQL re-checks the condition against the row a concurrent UPDATE wrote).
A new day or month starts its count again at zero. A refused charge changes nothing.
"""

from __future__ import annotations

import functools

from django.utils import timezone

from accounts.models import ApiKey, spend_period
from lib import sql
from lib.errors import DomainError


class KeySpendCapReached(DomainError):
    code = "key_spend_cap_reached"
    message = "This API key has reached its spend cap; the account's other keys are not affected."


def cap_require(*, key: ApiKey, amount: int) -> None:
    """Refuse early, before any work, when the key's caps cannot take `amount` more (as it was loaded;
    `cap_spend` stays the guarantee)."""
    over_day = key.daily_cap is not None and key.spent_today + amount > key.daily_cap
    over_month = key.monthly_cap is not None and key.spent_this_month + amount > key.monthly_cap
    if over_day or over_month:
        raise KeySpendCapReached(_refusal(key, over_day))


def cap_spend(*, key: ApiKey, amount: int) -> None:
    """Count `amount` credits against the key's caps or raise KeySpendCapReached, changing nothing.
    Call it inside the transaction that charges the credits, so both stand or neither.

    Hand-written (lib/sql.py), the statement the ORM built: every charged verification runs it in
    the transaction that holds SQLite's write lock, and the ORM took about 0.68 ms to build its
    CASE expressions, the statement itself 0.013 ms (bench/README.md). Every expression reads the
    row as it was before the UPDATE, in SQLite and PostgreSQL alike."""
    if amount <= 0:
        return
    day, month = spend_period(timezone.now())
    counted = sql.execute(_count_spend(), {"day": day, "month": month, "amount": amount, "key": key.pk})
    if not counted:
        key.refresh_from_db(fields=["daily_cap", "monthly_cap", "spend_day", "spent_day", "spend_month", "spent_month"])
        raise KeySpendCapReached(_refusal(key, key.daily_cap is not None and key.spent_today + amount > key.daily_cap))


@functools.cache  # one database per process
def _count_spend() -> str:
    day_so_far = "(CASE WHEN spend_day = %(day)s THEN spent_day ELSE 0 END)"
    month_so_far = "(CASE WHEN spend_month = %(month)s THEN spent_month ELSE 0 END)"
    return (
        f"UPDATE {sql.table(ApiKey)} SET spent_day = {day_so_far} + %(amount)s, spend_day = %(day)s,"
        f" spent_month = {month_so_far} + %(amount)s, spend_month = %(month)s"
        f" WHERE id = %(key)s AND (daily_cap IS NULL OR daily_cap >= {day_so_far} + %(amount)s)"
        f" AND (monthly_cap IS NULL OR monthly_cap >= {month_so_far} + %(amount)s)"
    )


def _refusal(key: ApiKey, daily: bool) -> str:
    if daily:
        return f"This API key has reached its daily spend cap ({key.daily_cap} credits a UTC day)."
    return f"This API key has reached its monthly spend cap ({key.monthly_cap} credits a calendar month)."
