"""The portal's Guarantee page: this month's figures and the last twelve months, a bar for each month's
bounce rate of valid answers (docs/guarantee.md)."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from accounts.decorators import account_required
from accounts.models import Account
from accounts.permissions import Action
from billing import guarantee_report
from billing.guarantee import month_of
from lib.bar_charts import bar_chart

MONTHS = 12


def last_months(now: datetime, count: int = MONTHS) -> list[datetime]:
    """The first instants of the last `count` calendar months, oldest first, this one last."""
    starts = [month_of(now)[0]]
    while len(starts) < count:
        starts.insert(0, month_of(starts[0] - timedelta(days=1))[0])
    return starts


@account_required(Action.USAGE)
@require_GET
def guarantee(request: HttpRequest, account: Account) -> HttpResponse:
    now = timezone.now()
    starts = last_months(now)
    found = guarantee_report.months(account.pk, starts[0])
    months = [found.get(start, guarantee_report.Month(start)) for start in starts]
    # Bounce rate in tenths of a percent, so that the bars stay integers.
    points = [
        (date(m.start.year, m.start.month, 1), round(1000 * m.bounced / m.valid) if m.valid else 0) for m in months
    ]
    context = {
        "summary": guarantee_report.summary(account.pk, now),
        "months": [(m, guarantee_report.rate(m.bounced, m.valid)) for m in reversed(months)],
        "chart": bar_chart(points),
    }
    return render(request, "billing/guarantee.html", context)
