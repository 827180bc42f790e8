"""The price list: credit packs and paid plans, read from the BILLING_PRICES setting.

Packs are one-off purchases; plans are monthly subscriptions that grant their credits each paid
period. `enterprise` has no price: staff arrange it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from accounts.models import Plan
from lib.money import dollars


@dataclass(frozen=True)
class Price:
    code: str  # pack_1k … pack_1m, or a plan code
    credits: int
    cents: int
    currency: str

    @property
    def amount(self) -> str:
        return dollars(self.cents, short=True)

    @property
    def per_thousand(self) -> str:
        """Price per 1,000 credits, so packs and plans compare at a glance."""
        return f"${self.cents * 10 / self.credits:,.2f}"

    @property
    def stripe_plan_id(self) -> str:
        """A plan's id at Stripe: a new price is a new Stripe plan, so old subscriptions keep theirs."""
        return f"verifier-{self.code}-{self.cents}-{self.currency}-month"


def _table(kind: str) -> list[Price]:
    prices: dict[str, Any] = settings.BILLING_PRICES
    currency = str(prices["currency"])
    rows = prices[kind].items()
    return [
        Price(code=code, credits=int(row["credits"]), cents=int(row["cents"]), currency=currency) for code, row in rows
    ]


def packs() -> list[Price]:
    return _table("packs")


def plans() -> list[Price]:
    return _table("plans")


def pack(code: str) -> Price | None:
    return next((price for price in packs() if price.code == code), None)


def plan(code: str) -> Price | None:
    return next((price for price in plans() if price.code == code), None)


def plan_for_stripe_plan(stripe_plan_id: str) -> Price | None:
    """The plan a Stripe plan id stands for, at whatever price it was created: `verifier-<code>-…`."""
    parts = stripe_plan_id.split("-")
    return plan(parts[1]) if len(parts) > 2 and parts[0] == "verifier" else None


def price_list() -> dict[str, Any]:
    """What a pricing section shows (the landing page's, the billing page's): packs, and every plan with its price."""
    by_code = {price.code: price for price in plans()}
    return {"packs": packs(), "plan_rows": [(plan, by_code.get(plan.code)) for plan in Plan.objects.all()]}
