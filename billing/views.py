from __future__ import annotations

from django.conf import settings
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts.decorators import account_required
from accounts.models import Account, Plan
from accounts.permissions import Action

LEDGER_PAGE_SIZE = 25


@account_required(Action.BILLING)
def billing(request: HttpRequest, account: Account) -> HttpResponse:
    ledger = Paginator(account.ledger_entries.all(), LEDGER_PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "account": account,
        "plans": Plan.objects.all(),
        "ledger": ledger,
        "contact_email": settings.BILLING_CONTACT_EMAIL,
    }
    return render(request, "billing/billing.html", context)
