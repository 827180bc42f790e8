"""Portal pages about the API's credentials: API keys (created, listed, revoked), the callback
signing secret (shown, rotated) and the account's callback URL."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from accounts.auditing import audit
from accounts.decorators import account_required
from accounts.forms import ApiKeyForm, CallbackUrlForm, KeyLimitsForm
from accounts.key_limits import Actor
from accounts.keys import KeyChange, change_summary, created_summary, key_change, key_create
from accounts.models import (
    SECRET_ROTATION_OVERLAP,
    Account,
    ApiKey,
    AuditEvent,
    Membership,
)
from accounts.permissions import Action, role_may
from accounts.two_factor_views import reask_needed
from accounts.widget import snippet
from lib.errors import DomainError
from lib.views import confirm_then

Event = AuditEvent.Action


@account_required(Action.KEYS)
@require_http_methods(["GET", "POST"])
def keys(request: HttpRequest, account: Account) -> HttpResponse:
    form = ApiKeyForm(request.POST or None)
    new_key = None
    full = request.POST.get("scope", ApiKey.Scope.FULL) in ("", ApiKey.Scope.FULL)
    if request.method == "POST" and full and (stale := reask_needed(request)) is not None:
        messages.info(request, "A full key needs your password again; then create it once more.")
        return stale
    if request.method == "POST" and form.is_valid() and (new_key := _key_made(request, account, form)):
        form = ApiKeyForm()
    context = {
        "account": account,
        "form": form,
        "keys": account.api_keys.select_related("created_by"),
        "new_key": new_key,
        "per_ip": settings.PUBLISHABLE_PER_IP_PER_HOUR,
    }
    return render(request, "accounts/keys.html", context)


def _key_made(request: HttpRequest, account: Account, form: ApiKeyForm) -> dict[str, Any] | None:
    """Make the form's key (rendered in this response only: the raw key is never stored), or put
    the refusal on the form."""
    limits = form.limits()
    if limits["kind"] == ApiKey.Kind.PUBLISHABLE and not role_may(_me(request).role, Action.KEYS_ADMIN):
        form.add_error("kind", "Only an owner or admin may make a publishable key.")
        return None
    try:
        key, raw = key_create(
            account=account, name=form.cleaned_data["name"], created_by=request.user,
            key_mode=form.cleaned_data["mode"], actor=_actor(request), **limits,
        )  # fmt: skip
    except DomainError as error:
        form.add_error(error.param if error.param in form.fields else None, error.message)
        return None
    audit(request, account, Event.KEY_CREATED, created_summary(key))
    return {"key": key, "raw": raw, "snippet": snippet(request, raw) if key.is_publishable else ""}


@account_required(Action.KEYS)
@require_http_methods(["GET", "POST"])
def key_edit(request: HttpRequest, account: Account, key_id: int) -> HttpResponse:
    """A key's name, spend caps and (a publishable key's, for an owner or admin) allowed origins."""
    key = get_object_or_404(account.api_keys.active(), pk=key_id)
    if key.is_publishable and not role_may(_me(request).role, Action.KEYS_ADMIN):
        raise Http404("Only an owner or admin may change a publishable key.")
    form = KeyLimitsForm(request.POST or None, key=key)
    if request.method == "POST" and form.is_valid():
        try:
            changed = key_change(key=key, change=KeyChange(**form.changes()), actor=_actor(request))
        except DomainError as error:
            form.add_error(error.param if error.param in form.fields else None, error.message)
        else:
            if changed:
                audit(request, account, Event.KEY_CHANGED, change_summary(key, changed))
            messages.success(request, f"The key “{key.name}” is saved.")
            return redirect("keys")
    return render(request, "accounts/key_edit.html", {"account": account, "key": key, "form": form})


def _me(request: HttpRequest) -> Membership:
    membership: Membership = request.membership  # type: ignore[attr-defined]  # set by account_required
    return membership


def _actor(request: HttpRequest) -> Actor:
    """A member in the portal: no key of theirs limits what they do, their role does."""
    return Actor(user=request.user, role=_me(request).role)


@account_required(Action.KEYS)
@require_http_methods(["GET", "POST"])
def key_revoke(request: HttpRequest, account: Account, key_id: int) -> HttpResponse:
    key = get_object_or_404(account.api_keys, pk=key_id)
    if not key.is_active:
        messages.info(request, f"The key “{key.name}” was already revoked.")
        return redirect("keys")

    def revoke() -> None:
        key.revoke()
        audit(request, account, Event.KEY_REVOKED, f"{key.prefix}… “{key.name}”")

    return confirm_then(
        request,
        act=revoke,
        done_message=f"The key “{key.name}” is revoked. Requests using it now get 401 invalid_api_key.",
        done_url="keys",
        page={
            "title": f"Revoke the key “{key.name}”?",
            "body": f"Requests signed with {key.prefix}… will be refused at once. This cannot be undone.",
            "button": "Revoke key",
            "cancel_url": "keys",
        },
    )


@account_required(Action.SECRET)
@require_http_methods(["GET", "POST"])
def signing_secret(request: HttpRequest, account: Account) -> HttpResponse:
    """The signing secret, and the account's callback URL (where resolved verifications are announced)."""
    form = CallbackUrlForm(request.POST or None, initial={"callback_url": account.callback_url})
    if request.method == "POST" and form.is_valid():
        account.callback_url = form.cleaned_data["callback_url"]
        account.save(update_fields=["callback_url"])
        messages.success(request, "Callback URL saved.")
        return redirect("signing-secret")
    secrets = account.active_signing_secrets()
    previous = secrets[1] if len(secrets) > 1 else None
    rotated_at = account.secret_rotated_at
    overlap_ends = rotated_at + SECRET_ROTATION_OVERLAP if previous and rotated_at else None
    context = {"account": account, "previous_secret": previous, "overlap_ends": overlap_ends, "form": form}
    return render(request, "accounts/signing_secret.html", context)


@account_required(Action.SECRET)
@require_http_methods(["GET", "POST"])
def signing_secret_rotate(request: HttpRequest, account: Account) -> HttpResponse:
    if (stale := reask_needed(request)) is not None:
        return stale

    def rotate() -> None:
        account.rotate_signing_secret()
        audit(request, account, Event.SECRET_ROTATED)

    return confirm_then(
        request,
        act=rotate,
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
