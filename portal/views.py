"""The portal's pages that draw on every app: the landing page, sign-up, the dashboard."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.decorators import account_required
from accounts.forms import SignupForm
from accounts.models import Account
from accounts.plans import SIGNUP_CREDITS
from accounts.services import account_open
from billing.models import LedgerEntry
from billing.prices import price_list
from billing.services import OPENING_NOTE, credits_grant
from jobs.models import Job
from lib.charts import bar_chart

CHART_DAYS = 30


def landing(request: HttpRequest) -> HttpResponse:
    context = {"signup_credits": SIGNUP_CREDITS, "contact_email": settings.BILLING_CONTACT_EMAIL, **price_list()}
    return render(request, "portal/landing.html", context)


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("dashboard")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                opened = account_open(
                    email=form.cleaned_data["email"], password=form.cleaned_data["password"], issue_key=False
                )
                credits_grant(account=opened.account, amount=SIGNUP_CREDITS, note=OPENING_NOTE)
        except IntegrityError:
            # Two sign-ups with one address at the same moment: the form's check passed for both.
            form.add_error("email", SignupForm.EMAIL_TAKEN)
        else:
            login(request, opened.user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome! Your free plan comes with {SIGNUP_CREDITS} credits.")
            return redirect("dashboard")
    return render(request, "portal/signup.html", {"form": form})


@account_required
def dashboard(request: HttpRequest, account: Account) -> HttpResponse:
    usage = LedgerEntry.objects.daily_usage(account=account, days=CHART_DAYS)
    context = {"account": account, "chart": bar_chart(usage), "chart_days": CHART_DAYS, "jobs": recent_jobs(account)}
    return render(request, "portal/dashboard.html", context)


def recent_jobs(account: Account) -> list[Job]:
    """The dashboard's "Recent bulk jobs": the account's five newest."""
    return list(account.jobs.all()[:5])
