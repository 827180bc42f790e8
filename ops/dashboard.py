"""/admin/dashboard/: the business and the machine at a glance, for staff (others go to the admin log-in)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from billing import guarantee_report
from lib.bar_charts import bar_chart
from ops import business, machine
from verification.deep import throttled_addresses
from verification.egresses import egress_health_all
from verification.resolver import resolver_health

CHART_DAYS = 30


def business_figures() -> dict[str, Any]:
    days = business.daily(CHART_DAYS)
    return {
        "usage": business.usage(days),
        "chart": bar_chart([(day, max(0, single + bulk)) for day, single, bulk, _ in days]),
        "signups": business.signups(),
        "active_accounts": business.active_accounts(),
        "plan_mix": business.plan_mix(),
        "top_accounts": business.top_accounts(),
        "running_out": business.running_out(),
        "guarantee_refunds": guarantee_report.refunds_by_account(timezone.now() - timedelta(days=CHART_DAYS)),
        "guarantee_max_share": settings.GUARANTEE_MAX_SHARE,
        "revenue_rows": _revenue_rows(business.revenue()),
        **business.payment_problems(),
    }


def _revenue_rows(revenue: dict[str, business.Revenue]) -> list[tuple[str, str, business.Revenue]]:
    labels = {"today": "Today", "week": "7 days", "month": "30 days"}
    return [(name, label, revenue[name]) for name, label in labels.items()]


def machine_figures() -> dict[str, Any]:
    unknown, verdicts = machine.unknown_share()
    return {
        "jobs": machine.jobs(),
        "queue": machine.queue(),
        "requeued": machine.chunks_requeued(),
        "callbacks": machine.callbacks(),
        "unknown": {
            "count": unknown,
            "total": verdicts,
            "percent": round(100 * unknown / verdicts, 1) if verdicts else 0,
        },
        "heartbeats": machine.heartbeats(),
        "smtp": machine.smtp_sessions(),
        "resolver": resolver_health(),
        "egresses": egress_health_all(),
        "throttled": throttled_addresses(),
        "day_ago": machine.day_ago(),
    }


@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    context = {
        **admin.site.each_context(request),
        "title": "Dashboard",
        "chart_days": CHART_DAYS,
        **business_figures(),
        **machine_figures(),
    }
    return TemplateResponse(request, "admin/dashboard.html", context)
