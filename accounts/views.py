"""Portal pages about the account itself: log-in, keys, signing secret."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from accounts.decorators import account_required
from accounts.forms import ApiKeyForm, LoginForm, SiteUrlPasswordResetForm
from accounts.models import SECRET_ROTATION_OVERLAP, Account, ApiKey


class PasswordResetView(auth_views.PasswordResetView):
    form_class = SiteUrlPasswordResetForm


class LoginView(auth_views.LoginView):
    form_class = LoginForm
    redirect_authenticated_user = True
    template_name = "accounts/login.html"


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
