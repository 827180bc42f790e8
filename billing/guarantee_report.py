"""The bounce guarantee in figures (docs/guarantee.md): per calendar month, the account's charged `valid`
answers, how many of them bounced, how many were refunded and how many refunds the cap held back, and the
bounce rate by mail provider family. `GET /v1/account`'s `guarantee`, the portal's Guarantee page and the
staff dashboard read it.

"Bounced" counts every hard bounce the account reported of the address within 30 days after the answer,
authenticated or not: it is the account's own accuracy figure. Only authenticated ones refund.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.db.models.functions import TruncMonth

from billing.guarantee import REFUND_WINDOW, answers_filed, month_of, monthly_cap
from billing.models import FAMILIES, GuaranteeRefund, ValidAnswer
from feedback.models import FeedbackEvent, Outcome
from feedback.reports import CLOCK_SKEW


@dataclass
class Month:
    start: datetime
    valid: int = 0
    bounced: int = 0
    refunded: int = 0
    over_cap: int = 0
    by_family: dict[str, tuple[int, int]] = field(default_factory=dict)  # family -> (valid, bounced)


def _with_bounced(answers: QuerySet[ValidAnswer]) -> QuerySet[ValidAnswer]:
    bounces = FeedbackEvent.objects.filter(
        account_id=OuterRef("account_id"),
        address_key=OuterRef("address_key"),
        outcome=Outcome.HARD_BOUNCE,
        occurred_at__gte=OuterRef("answered_at") - CLOCK_SKEW,
        occurred_at__lte=OuterRef("answered_at") + REFUND_WINDOW,
    )
    return answers.annotate(bounced=Exists(bounces))


def months(account_id: int, since: datetime) -> dict[datetime, Month]:
    """Each month since `since` (the first of a month) that had valid answers, oldest first."""
    answers_filed(account_id)
    answers = _with_bounced(ValidAnswer.objects.filter(account_id=account_id, answered_at__gte=since))
    rows = (
        answers.annotate(month=TruncMonth("answered_at"))
        .values("month", "provider_family")
        .annotate(
            valid=Count("id"),
            bounced_count=Count("id", filter=Q(bounced=True)),
            refunded=Count("refund", filter=Q(refund__credited=True)),
            over_cap=Count("refund", filter=Q(refund__credited=False)),
        )
        .order_by("month")
    )
    found: dict[datetime, Month] = {}
    for row in rows:
        month = found.setdefault(row["month"], Month(row["month"]))
        month.valid += row["valid"]
        month.bounced += row["bounced_count"]
        month.refunded += row["refunded"]
        month.over_cap += row["over_cap"]
        month.by_family[row["provider_family"]] = (row["valid"], row["bounced_count"])
    return found


def rate(bounced: int, valid: int) -> float | None:
    return round(bounced / valid, 4) if valid else None


def summary(account_id: int, now: datetime) -> dict[str, Any]:
    """This month's figures, as GET /v1/account's `guarantee` shows them."""
    start, _ = month_of(now)
    month = months(account_id, start).get(start, Month(start))
    return {
        "month": f"{start:%Y-%m}",
        "valid_answers": month.valid,
        "bounced": month.bounced,
        "refunded": month.refunded,
        "refunds_over_cap": month.over_cap,
        "cap": monthly_cap(account_id, now),
        "max_share": settings.GUARANTEE_MAX_SHARE,
        "bounce_rate_by_provider": {
            family: {"valid": valid, "bounced": bounced, "rate": rate(bounced, valid)}
            for family in FAMILIES
            for valid, bounced in [month.by_family.get(family, (0, 0))]
        },
    }


def refunds_by_account(since: datetime, limit: int = 20) -> list[dict[str, Any]]:
    """For staff: the accounts with the most guarantee refunds since `since`, credited and held back by the cap."""
    rows = (
        GuaranteeRefund.objects.filter(created_at__gte=since)
        .values("account_id", email=F("account__owner__email"))
        .annotate(refunded=Count("id", filter=Q(credited=True)), over_cap=Count("id", filter=Q(credited=False)))
        .order_by("-refunded", "-over_cap", "account_id")[:limit]
    )
    return [dict(row) for row in rows]
