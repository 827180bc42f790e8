"""Spend caps: the credits one API key may spend in a UTC day and in a calendar month
(docs/keys.md, "Spend caps").

Each key keeps what it spent in its latest day and month on its own row. A charge counts there
with one conditional UPDATE, in the transaction that takes the credits: the row count says
whether it fitted, so parallel requests on a key with 10 left charge exactly 10, on SQLite and
PostgreSQL alike (PostgreSQL re-checks the condition against the row a concurrent UPDATE wrote).
A new day or month starts its count again at zero. A refused charge changes nothing.
"""

from __future__ import annotations

from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from accounts.models import ApiKey, spend_period
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
    Call it inside the transaction that charges the credits, so both stand or neither."""
    if amount <= 0:
        return
    day, month = spend_period(timezone.now())
    day_so_far = Case(When(spend_day=day, then=F("spent_day")), default=Value(0))
    month_so_far = Case(When(spend_month=month, then=F("spent_month")), default=Value(0))
    fits = (Q(daily_cap__isnull=True) | Q(daily_cap__gte=day_so_far + amount)) & (
        Q(monthly_cap__isnull=True) | Q(monthly_cap__gte=month_so_far + amount)
    )
    counted = ApiKey.objects.filter(fits, pk=key.pk).update(
        spent_day=day_so_far + amount,
        spend_day=day,
        spent_month=month_so_far + amount,
        spend_month=month,
    )
    if not counted:
        key.refresh_from_db(fields=["daily_cap", "monthly_cap", "spend_day", "spent_day", "spend_month", "spent_month"])
        raise KeySpendCapReached(_refusal(key, key.daily_cap is not None and key.spent_today + amount > key.daily_cap))


def _refusal(key: ApiKey, daily: bool) -> str:
    if daily:
        return f"This API key has reached its daily spend cap ({key.daily_cap} credits a UTC day)."
    return f"This API key has reached its monthly spend cap ({key.monthly_cap} credits a calendar month)."
