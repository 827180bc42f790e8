"""Log-in throttling: 5 attempts for one username from one address, then that pair is locked
out until 15 minutes after the first; a successful log-in starts the count again.

An attempt is counted before its password is checked, in one atomic statement on the database
(accounts.models.LoginWindow), so parallel attempts cannot all read "4 so far": exactly 5
passwords are ever checked per window, on SQLite and PostgreSQL, with or without Redis.
"""

from __future__ import annotations

import time

from django.http import HttpRequest

from accounts.models import LoginWindow
from lib.client_address import client_address
from lib.tokens import sha256_hex

MAX_ATTEMPTS = 5
WINDOW_SECONDS = 15 * 60
# Per client address, whatever the email: a brake on trying many addresses or opening many accounts.
# (name: attempts, seconds) — docs/portal.md, "Security".
PER_ADDRESS = {"login": (30, 15 * 60), "signup": (5, 60 * 60), "password-reset": (10, 60 * 60)}
PASSWORD_RESETS_PER_EMAIL = (3, 60 * 60)


def login_attempt_allowed(*, username: str, request: HttpRequest | None) -> bool:
    """Count this attempt; False when the pair has used up its attempts for the window."""
    pair = _pair(username, request)
    attempts = LoginWindow.objects.count_attempt(pair=pair, now=time.time(), window_seconds=WINDOW_SECONDS)
    return attempts <= MAX_ATTEMPTS


def login_succeeded(*, username: str, request: HttpRequest | None) -> None:
    LoginWindow.objects.filter(pair=_pair(username, request)).delete()


def address_allowed(scope: str, request: HttpRequest | None) -> bool:
    """Count one `scope` attempt from the request's client address (PER_ADDRESS)."""
    limit, window = PER_ADDRESS[scope]
    return attempt_allowed(scope=f"{scope}-ip", key=client_address(request), limit=limit, window_seconds=window)


def _pair(username: str, request: HttpRequest | None) -> str:
    return sha256_hex(f"{username.strip().lower()}|{client_address(request)}")


def attempt_allowed(*, scope: str, key: str, limit: int, window_seconds: int) -> bool:
    """Count one attempt of `scope` for `key` (an address, an email); False once `limit` were made in
    the window. The same atomic counter as log-ins (accounts.models.LoginWindow)."""
    wait = LoginWindow.objects.attempt_wait(
        scope=scope, key=key, limit=limit, window_seconds=window_seconds, now=time.time()
    )
    return wait is None
