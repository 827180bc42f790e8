"""The form widget: its script, served under a stable and a versioned name, the snippet that loads
it with Subresource Integrity, and the portal's demo page (docs/widget.md)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from accounts.auditing import audit
from accounts.decorators import account_required
from accounts.keys import created_summary, key_create
from accounts.models import Account, ApiKey, AuditEvent, KeyMode
from accounts.permissions import Action
from lib.errors import DomainError
from lib.widget import snippet, widget_script

PUBLISHABLE_PREFIX = "ev_pub_"
STABLE_MAX_AGE = 300  # the stable name follows new releases within minutes


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
    return render(request, "portal/widget_demo.html", context)


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
