"""Portal pages about the API's credentials: API keys (created, listed, revoked) and the callback
signing secret (shown, rotated)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from accounts.auditing import audit
from accounts.decorators import account_required
from accounts.forms import (
    ApiKeyForm,
)
from accounts.models import (
    SECRET_ROTATION_OVERLAP,
    Account,
    ApiKey,
    AuditEvent,
)
from accounts.permissions import Action
from accounts.two_factor_views import reask_needed
from accounts.views import confirm_then

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
    if request.method == "POST" and form.is_valid():
        # Rendered in this response only: the raw key is never stored, so it cannot be shown again.
        key, raw = ApiKey.issue(
            account=account,
            name=form.cleaned_data["name"],
            created_by=request.user,
            key_mode=form.cleaned_data["mode"],
            **form.limits(),
        )
        new_key = {"key": key, "raw": raw}
        audit(request, account, Event.KEY_CREATED, f"{key.prefix}… “{key.name}”, scope {key.scope}")
        form = ApiKeyForm()
    context = {
        "account": account,
        "form": form,
        "keys": account.api_keys.select_related("created_by"),
        "new_key": new_key,
    }
    return render(request, "accounts/keys.html", context)


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
def signing_secret(request: HttpRequest, account: Account) -> HttpResponse:
    secrets = account.active_signing_secrets()
    previous = secrets[1] if len(secrets) > 1 else None
    rotated_at = account.secret_rotated_at
    overlap_ends = rotated_at + SECRET_ROTATION_OVERLAP if previous and rotated_at else None
    context = {"account": account, "previous_secret": previous, "overlap_ends": overlap_ends}
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
