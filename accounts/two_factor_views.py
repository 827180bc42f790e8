"""Sign-in's second step and the security settings page (two-factor enrolment), on django-otp."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

import segno
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods
from django_otp import login as otp_login

from accounts.auditing import audit, sign_in_failed
from accounts.forms import CodeForm, ReaskForm
from accounts.login_throttle import WINDOW_SECONDS, login_attempt_allowed, login_succeeded
from accounts.models import AuditEvent, Membership
from accounts.two_factor import (
    has_two_factor,
    totp_pending,
    totp_secret,
    two_factor_disable,
    two_factor_enable,
    two_factor_match,
)

# Between the password and the code: who passed the first step, and where they were going.
PENDING_USER, PENDING_NEXT = "2fa_pending_user", "2fa_next"
# When the session last proved who it is (sign-in or re-asking); sensitive actions want it recent.
PROVEN_AT = "proven_at"
REASK_AFTER_SECONDS = 10 * 60


def on_signed_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is not None and hasattr(request, "session"):
        request.session[PROVEN_AT] = time.time()


def reask_needed(request: HttpRequest) -> HttpResponse | None:
    """For a sensitive action (rotate the secret, create a full key, remove a member, change
    two-factor): None while the sign-in is under 10 minutes old, else the page that asks for the
    password or a code again and then comes back here."""
    if time.time() - float(request.session.get(PROVEN_AT, 0)) <= REASK_AFTER_SECONDS:
        return None
    back = request.get_full_path() if request.method == "GET" else request.headers.get("Referer", "")
    return redirect(f"{reverse('reask')}?{urlencode({'next': back})}")


@login_required
@never_cache
@require_http_methods(["GET", "POST"])
def reask(request: HttpRequest) -> HttpResponse:
    user = request.user
    form = ReaskForm(request.POST or None)
    next_url = request.POST.get("next") or request.GET.get("next", "")
    if request.method == "POST" and form.is_valid():
        given = form.cleaned_data["password_or_code"]
        if not login_attempt_allowed(username=f"reask:{user.get_username()}", request=request):
            form.add_error(None, f"Too many wrong tries. Wait {WINDOW_SECONDS // 60} minutes.")
        elif user.check_password(given) or two_factor_match(user, given) is not None:
            login_succeeded(username=f"reask:{user.get_username()}", request=request)
            request.session[PROVEN_AT] = time.time()
            return redirect(_safe(request, next_url))
        else:
            form.add_error("password_or_code", "That is neither your password nor a current code.")
    return render(request, "accounts/reask.html", {"form": form, "next": next_url})


def _safe(request: HttpRequest, url: str) -> str:
    ok = url and url_has_allowed_host_and_scheme(url, {request.get_host()}, request.is_secure())
    return url if ok else reverse("dashboard")


def second_step_needed(request: HttpRequest, user: Any, next_url: str) -> HttpResponse | None:
    """After a right password: for a user with two-factor, remember them (not yet signed in) and ask
    for the code; None for everyone else (signed in at once)."""
    if not has_two_factor(user):
        return None
    request.session[PENDING_USER] = user.pk
    request.session[PENDING_NEXT] = next_url
    return redirect("login-code")


@never_cache
@require_http_methods(["GET", "POST"])
def login_code(request: HttpRequest) -> HttpResponse:
    pending = request.session.get(PENDING_USER)
    user = get_user_model().objects.filter(pk=pending, is_active=True).first() if pending else None
    if user is None:
        return redirect("login")
    form = CodeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        # The same throttle as the password: 5 tries per person and address in 15 minutes.
        if not login_attempt_allowed(username=f"2fa:{user.username}", request=request):
            form.add_error("code", f"Too many wrong codes. Wait {WINDOW_SECONDS // 60} minutes.")
        elif (device := two_factor_match(user, form.cleaned_data["code"])) is None:
            form.add_error("code", "That code is not right (or was used already). Try the current one.")
            sign_in_failed(request, Membership.objects.filter(user=user), "wrong two-factor code")
        else:
            login_succeeded(username=f"2fa:{user.username}", request=request)
            next_url = request.session.pop(PENDING_NEXT, "")
            del request.session[PENDING_USER]
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            otp_login(request, device)
            return redirect(_safe(request, next_url))
    return render(request, "accounts/login_code.html", {"form": form})


@login_required
@never_cache
@require_http_methods(["GET", "POST"])
def security(request: HttpRequest) -> HttpResponse:
    """Enrol an authenticator app (its secret as text and QR code), or turn two-factor off."""
    user = request.user
    enabled = has_two_factor(user)
    form = CodeForm(request.POST or None)
    if not enabled:  # no recovery code exists yet: the app's code is the only one
        form.fields["code"].help_text = "The 6 digits your authenticator app shows now."
    context: dict[str, Any] = {"enabled": enabled, "form": form}
    if request.method == "POST" and (stale := reask_needed(request)) is not None:
        return stale
    if request.method == "POST" and form.is_valid():
        if enabled:
            return _turn_off(request, form)
        codes = two_factor_enable(user=user, device=totp_pending(user), code=form.cleaned_data["code"])
        if codes is not None:
            otp_login(request, user.totpdevice_set.get(confirmed=True))  # type: ignore[union-attr]
            _audit_everywhere(request, "two-factor sign-in turned on")
            return render(request, "accounts/security.html", {"enabled": True, "recovery_codes": codes})
        form.add_error("code", "That code is not right. Enter the 6 digits your app shows now.")
    if not enabled:
        device = totp_pending(user)
        qr = segno.make(device.config_url, error="m")
        context |= {"secret": totp_secret(device), "qr": qr.svg_inline(scale=4, title="Two-factor QR code")}
    return render(request, "accounts/security.html", context)


def _turn_off(request: HttpRequest, form: CodeForm) -> HttpResponse:
    # Turning it off asks for a code (app or recovery) whatever the sign-in's age.
    if two_factor_match(request.user, form.cleaned_data["code"]) is None:
        form.add_error("code", "That code is not right.")
        return render(request, "accounts/security.html", {"enabled": True, "form": form})
    two_factor_disable(user=request.user)
    _audit_everywhere(request, "two-factor sign-in turned off")
    messages.success(request, "Two-factor sign-in is off.")
    return redirect("security")


def _audit_everywhere(request: HttpRequest, detail: str) -> None:
    memberships = Membership.objects.filter(user_id=int(request.user.pk or 0))
    for account_id in memberships.values_list("account_id", flat=True):
        audit(request, account_id, AuditEvent.Action.TWO_FACTOR_CHANGED, detail)
