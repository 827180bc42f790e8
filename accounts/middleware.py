"""Two-factor sign-in holds at every door (docs/portal.md, "Two-factor sign-in").

A user with a confirmed device is signed in only once their session has passed the second
factor, whatever door it came in by: the portal's login asks for the code itself, but the admin's
login, a password reset, an invitation or a session older than the device would otherwise leave a
session with the password alone. Such a half-signed-in session reaches no page: it is turned into
the second step of a sign-in (signed out, the user remembered as pending, the page they asked
for kept), and the code page finishes it. The API authenticates by key, never by session, and is
not touched; nor are the probes, static files and webhooks.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import Resolver404, resolve

from accounts.two_factor import has_two_factor
from accounts.two_factor_views import PENDING_NEXT, PENDING_USER

# Pages a half-signed-in session may still open: the code page itself and signing out.
_OPEN_WHILE_PENDING = frozenset({"login-code", "logout"})
# Not pages: keys or signatures authenticate these, never a session.
_NOT_PAGES = ("/v1/", "/webhooks/", "/static/", "/widget/", "/healthz", "/readyz", "/metrics")


class SecondFactorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # The path first: the API, probes and static files never load the user or its devices.
        if not request.path.startswith(_NOT_PAGES) and half_signed_in(request) and not _open_while_pending(request):
            return second_step(request)
        return self.get_response(request)


def half_signed_in(request: HttpRequest) -> bool:
    """Signed in by password alone while the user has a device (django-otp's OTPMiddleware marks a
    session that passed a code verified)."""
    user = request.user
    return bool(user.is_authenticated and not user.is_verified() and has_two_factor(user))  # type: ignore[attr-defined]


def second_step(request: HttpRequest) -> HttpResponse:
    user_id = request.user.pk
    next_url = request.get_full_path() if request.method == "GET" else ""
    logout(request)
    request.session[PENDING_USER] = user_id
    request.session[PENDING_NEXT] = next_url
    return redirect("login-code")


def _open_while_pending(request: HttpRequest) -> bool:
    try:
        return resolve(request.path_info).url_name in _OPEN_WHILE_PENDING
    except Resolver404:
        return False
