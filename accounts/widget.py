"""The form widget, all of it (docs/widget.md): its script (static/widget/verifier-form.js) served under a
stable and a versioned name, with its version and Subresource Integrity value; the snippet that loads it,
shown on the keys page when a publishable key is made; and the portal's demo page.

It lives with the publishable keys it serves: the keys page (key_views.py) shows the snippet, and
accounts/ imports nothing from the apps above it."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from accounts.auditing import audit
from accounts.decorators import account_required
from accounts.keys import created_summary, key_create
from accounts.models import Account, ApiKey, AuditEvent, KeyMode
from accounts.permissions import Action
from lib.errors import DomainError

SCRIPT = Path("static") / "widget" / "verifier-form.js"
PUBLISHABLE_PREFIX = "ev_pub_"
STABLE_MAX_AGE = 300  # the stable name follows new releases within minutes


@dataclass(frozen=True, slots=True)
class Script:
    body: bytes
    version: str  # the first 12 hex digits of its SHA-256: the versioned file's name
    integrity: str  # the SRI value: sha384-<base64>


@cache
def widget_script() -> Script:
    body = (Path(settings.BASE_DIR) / SCRIPT).read_bytes()
    digest = base64.b64encode(hashlib.sha384(body).digest()).decode()
    return Script(body=body, version=hashlib.sha256(body).hexdigest()[:12], integrity=f"sha384-{digest}")


def snippet(request: HttpRequest, key: str) -> str:
    """The one tag a customer pastes: the versioned script, pinned by its integrity."""
    script = widget_script()
    src = request.build_absolute_uri(reverse("widget-versioned", args=[script.version]))
    return (
        f'<script src="{src}" integrity="{script.integrity}" crossorigin="anonymous" data-key="{key}" defer></script>'
    )


@require_GET
def widget_stable(request: HttpRequest) -> HttpResponse:
    return _served(f"public, max-age={STABLE_MAX_AGE}")


@require_GET
def widget_versioned(request: HttpRequest, version: str) -> HttpResponse:
    if version != widget_script().version:
        raise Http404("No such version of the widget.")
    return _served("public, max-age=31536000, immutable")


def _served(cache_control: str) -> HttpResponse:
    response = HttpResponse(widget_script().body, content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = cache_control
    # Any site may load it (a script tag with crossorigin="anonymous" needs this for SRI).
    response["Access-Control-Allow-Origin"] = "*"
    response["Cross-Origin-Resource-Policy"] = "cross-origin"
    return response


@account_required(Action.KEYS_ADMIN)
@require_http_methods(["GET", "POST"])
def widget_demo(request: HttpRequest, account: Account) -> HttpResponse:
    """Try a publishable key on a form on this page; or make a test one bound to this page's origin."""
    origin = f"{request.scheme}://{request.get_host()}"
    key = request.GET.get("key", "").strip()
    if request.method == "POST":
        key = _demo_key(request, account, origin)
    if key and not key.startswith(PUBLISHABLE_PREFIX):
        messages.error(
            request, "That is not a publishable key: they start with ev_pub_. Never put a secret key in a page."
        )
        key = ""
    context = {"account": account, "key": key, "origin": origin, "snippet": snippet(request, key or "ev_pub_…")}
    context["script"] = widget_script()
    return render(request, "accounts/widget_demo.html", context)


def _demo_key(request: HttpRequest, account: Account, origin: str) -> str:
    try:
        made, raw = key_create(
            account=account, created_by=request.user, kind=ApiKey.Kind.PUBLISHABLE, key_mode=KeyMode.TEST,
            name="Widget demo", allowed_origins=[origin],
        )  # fmt: skip
    except DomainError as error:
        messages.error(request, error.message)
        return ""
    audit(request, account, AuditEvent.Action.KEY_CREATED, created_summary(made))
    messages.success(request, "A test publishable key for this page was made: it answers from the sandbox, free.")
    return raw
