"""Portal pages about the account itself: landing, sign-up, log-in, dashboard, keys, signing secret."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from accounts.decorators import account_required
from accounts.forms import ApiKeyForm, LoginForm, SignupForm
from accounts.models import SECRET_ROTATION_OVERLAP, Account, ApiKey
from accounts.services import SIGNUP_CREDITS, account_open
from billing.models import LedgerEntry
from jobs.models import Job
from lib.charts import bar_chart

CHART_DAYS = 30


def landing(request: HttpRequest) -> HttpResponse:
    return render(request, "landing.html", {"signup_credits": SIGNUP_CREDITS})


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("dashboard")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            opened = account_open(
                email=form.cleaned_data["email"], password=form.cleaned_data["password"], issue_key=False
            )
        except IntegrityError:
            # Two sign-ups with one address at the same moment: the form's check passed for both.
            form.add_error("email", SignupForm.EMAIL_TAKEN)
        else:
            login(request, opened.account.owner, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome! Your free plan comes with {SIGNUP_CREDITS} credits.")
            return redirect("dashboard")
    return render(request, "accounts/signup.html", {"form": form})


class LoginView(auth_views.LoginView):
    form_class = LoginForm
    redirect_authenticated_user = True
    template_name = "accounts/login.html"


@account_required
def dashboard(request: HttpRequest, account: Account) -> HttpResponse:
    usage = LedgerEntry.objects.daily_usage(account=account, days=CHART_DAYS)
    context = {"account": account, "chart": bar_chart(usage), "chart_days": CHART_DAYS, "jobs": recent_jobs(account)}
    return render(request, "accounts/dashboard.html", context)


def recent_jobs(account: Account) -> list[Job]:
    """The dashboard's "Recent bulk jobs": the account's five newest."""
    return list(account.jobs.all()[:5])


@account_required
@require_http_methods(["GET", "POST"])
def keys(request: HttpRequest, account: Account) -> HttpResponse:
    form = ApiKeyForm(request.POST or None)
    new_key = None
    if request.method == "POST" and form.is_valid():
        # Rendered in this response only: the raw key is never stored, so it cannot be shown again.
        key, raw = ApiKey.issue(account=account, name=form.cleaned_data["name"])
        new_key = {"key": key, "raw": raw}
        form = ApiKeyForm()
    context = {"account": account, "form": form, "keys": account.api_keys.all(), "new_key": new_key}
    return render(request, "accounts/keys.html", context)


@account_required
@require_http_methods(["GET", "POST"])
def key_revoke(request: HttpRequest, account: Account, key_id: int) -> HttpResponse:
    key = get_object_or_404(account.api_keys, pk=key_id)
    if not key.is_active:
        messages.info(request, f"The key “{key.name}” was already revoked.")
        return redirect("keys")
    return confirm_then(
        request,
        act=key.revoke,
        done_message=f"The key “{key.name}” is revoked. Requests using it now get 401 invalid_api_key.",
        done_url="keys",
        page={
            "title": f"Revoke the key “{key.name}”?",
            "body": f"Requests signed with {key.prefix}… will be refused at once. This cannot be undone.",
            "button": "Revoke key",
            "cancel_url": "keys",
        },
    )


@account_required
def signing_secret(request: HttpRequest, account: Account) -> HttpResponse:
    secrets = account.active_signing_secrets()
    previous = secrets[1] if len(secrets) > 1 else None
    rotated_at = account.secret_rotated_at
    overlap_ends = rotated_at + SECRET_ROTATION_OVERLAP if previous and rotated_at else None
    context = {"account": account, "previous_secret": previous, "overlap_ends": overlap_ends}
    return render(request, "accounts/signing_secret.html", context)


@account_required
@require_http_methods(["GET", "POST"])
def signing_secret_rotate(request: HttpRequest, account: Account) -> HttpResponse:
    return confirm_then(
        request,
        act=account.rotate_signing_secret,
        done_message="New signing secret created. Callbacks carry both signatures for the next 24 hours.",
        done_url="signing-secret",
        page={
            "title": "Rotate the signing secret?",
            "body": "A new secret signs callbacks from now on. For 24 hours they carry a second v1 signature "
            "made with the current secret, so your receiver keeps working while you update it.",
            "button": "Rotate secret",
            "cancel_url": "signing-secret",
        },
    )


def confirm_then(
    request: HttpRequest, *, act: Callable[[], None], done_message: str, done_url: str, page: dict[str, str]
) -> HttpResponse:
    """A destructive action: GET asks for confirmation, POST does it and goes back."""
    if request.method == "POST":
        act()
        messages.success(request, done_message)
        return redirect(done_url)
    return render(request, "confirm.html", page)
