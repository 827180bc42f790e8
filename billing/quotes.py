"""What a plan switch will charge now and on which date next, shown before the customer confirms
(docs/portal.md, "Billing"). Stripe computes the real invoice; this says the same in advance."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from accounts.models import Account
from billing import prices
from billing.models import Customer
from lib.money import dollars

FREE_PLAN = "free"


@dataclass(frozen=True)
class Quote:
    plan_name: str
    charged_now: str  # "$29.00", or "" when nothing is charged now
    next_date: datetime | None  # the next renewal (or, for a cancellation, when the plan ends)
    next_amount: str  # charged on next_date, "" for none
    summary: str  # one sentence, what happens


def one_month_after(moment: datetime) -> datetime:
    """The same day next month (the last day of a shorter month), as a monthly subscription renews."""
    year, month = (moment.year + 1, 1) if moment.month == 12 else (moment.year, moment.month + 1)
    return moment.replace(year=year, month=month, day=min(moment.day, calendar.monthrange(year, month)[1]))


def plan_quote(*, account: Account, plan_code: str) -> Quote | None:
    """None for a plan that has no price."""
    customer = Customer.objects.filter(account=account).first()
    current = prices.plan(customer.subscription_plan) if customer and customer.subscription_id else None
    if plan_code == FREE_PLAN:
        ends = customer.period_end if customer and current else None
        return Quote("Free", "", ends, "", "Nothing is charged; your paid plan ends with its paid period.")
    price = prices.plan(plan_code)
    if price is None:
        return None
    name = plan_code.title()
    if current is None or customer is None or customer.period_end is None:
        now = timezone.now()
        return Quote(name, price.amount, one_month_after(now), price.amount, f"{name} starts now, paid monthly.")
    if price.code == current.code:
        return Quote(name, "", customer.period_end, price.amount, f"You stay on {name}.")
    if price.credits > current.credits:
        return Quote(
            name,
            _prorated(price.cents - current.cents, customer.period_end),
            customer.period_end,
            price.amount,
            f"{name} starts now: you pay the difference for the rest of this paid month.",
        )
    return Quote(name, "", customer.period_end, price.amount, f"You move to {name} when the paid month ends.")


def _prorated(cents: int, period_end: datetime) -> str:
    """The difference for what is left of the period (a month of about 30 days), to the cent."""
    left = max((period_end - timezone.now()).total_seconds(), 0) / (30 * 86400)
    return dollars(round(cents * min(left, 1.0)))
