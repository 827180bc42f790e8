"""The portal's pages that draw on every app: the landing page, sign-up, the dashboard."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts.decorators import account_required
from accounts.forms import SignupForm
from accounts.login_throttle import address_allowed, attempt_allowed
from accounts.models import Account
from accounts.permissions import Action
from accounts.plans import SIGNUP_CREDITS
from accounts.services import account_open
from billing.models import LedgerEntry
from billing.prices import price_list
from billing.services import OPENING_NOTE, credits_grant
from jobs.models import Job
from lib.bar_charts import bar_chart
from lib.signing import short_token, short_token_value

CHART_DAYS = 30
# The sign-up confirmation link: signed with SECRET_KEY, this long valid; it grants the credits once.
CONFIRM_VALIDITY = timedelta(days=7)
_CONFIRM_SALT = "portal.signup-confirm"


def landing(request: HttpRequest) -> HttpResponse:
    context = {"signup_credits": SIGNUP_CREDITS, "contact_email": settings.BILLING_CONTACT_EMAIL, **price_list()}
    return render(request, "portal/landing.html", context)


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("dashboard")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid() and not address_allowed("signup", request):
        form.add_error(None, "Too many sign-ups from your address: try again in an hour.")
    elif request.method == "POST" and form.is_valid():
        try:
            opened = account_open(
                email=form.cleaned_data["email"],
                password=form.cleaned_data["password"],
                issue_key=False,
                confirmed=False,
            )
        except IntegrityError:
            # Two sign-ups with one address at the same moment: the form's check passed for both.
            form.add_error("email", SignupForm.EMAIL_TAKEN)
        else:
            login(request, opened.user, backend="django.contrib.auth.backends.ModelBackend")
            _send_confirmation(opened.account)
            # The dashboard's banner says where the link went and what it brings: said once, not also here.
            messages.success(request, "Welcome!")
            return redirect("dashboard")
    return render(request, "portal/signup.html", {"form": form})


def _send_confirmation(account: Account) -> None:
    token = short_token(_CONFIRM_SALT, str(account.pk))
    link = settings.SITE_URL + reverse("signup-confirm", args=[token])
    body = render_to_string("portal/confirm_email.txt", {"link": link, "credits": SIGNUP_CREDITS})
    send_mail("Confirm your address to receive your free credits", body, None, [account.email])


@never_cache
def signup_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """The link mailed at sign-up: the address is confirmed and the free credits granted, once."""
    pk = short_token_value(_CONFIRM_SALT, token, max_age=CONFIRM_VALIDITY)
    account = Account.objects.filter(pk=int(pk)).first() if pk and pk.isdigit() else None
    if account is None:
        return render(request, "portal/confirmed.html", {"invalid": True}, status=404)
    with transaction.atomic():
        granted = account.confirm_email()
        if granted:
            credits_grant(account=account, amount=SIGNUP_CREDITS, note=OPENING_NOTE)
    return render(request, "portal/confirmed.html", {"granted": granted, "credits": SIGNUP_CREDITS})


@account_required(Action.USAGE)
@require_POST
def signup_confirm_resend(request: HttpRequest, account: Account) -> HttpResponse:
    if account.email_confirmed_at is None:
        if attempt_allowed(scope="confirm-mail", key=account.email, limit=3, window_seconds=3600):
            _send_confirmation(account)
            messages.success(request, f"Sent again to {account.email}.")
        else:
            messages.error(request, "Sent three times in the last hour already: look in your spam folder.")
    return redirect("dashboard")


@account_required(Action.USAGE)
def dashboard(request: HttpRequest, account: Account) -> HttpResponse:
    usage = LedgerEntry.objects.daily_usage(account=account, days=CHART_DAYS)
    context = {
        "account": account,
        "chart": bar_chart(usage),
        "chart_days": CHART_DAYS,
        "jobs": recent_jobs(account),
        "signup_credits": SIGNUP_CREDITS,
    }
    return render(request, "portal/dashboard.html", context)


def recent_jobs(account: Account) -> list[Job]:
    """The dashboard's "Recent bulk jobs": the account's five newest."""
    return list(account.jobs.live()[:5])
