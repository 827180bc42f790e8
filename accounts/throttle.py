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
from lib.tokens import sha256_hex

MAX_ATTEMPTS = 5
WINDOW_SECONDS = 15 * 60


def login_attempt_allowed(*, username: str, request: HttpRequest | None) -> bool:
    """Count this attempt; False when the pair has used up its attempts for the window."""
    pair = _pair(username, request)
    attempts = LoginWindow.objects.count_attempt(pair=pair, now=time.time(), window_seconds=WINDOW_SECONDS)
    return attempts <= MAX_ATTEMPTS


def login_succeeded(*, username: str, request: HttpRequest | None) -> None:
    LoginWindow.objects.filter(pair=_pair(username, request)).delete()


def _pair(username: str, request: HttpRequest | None) -> str:
    # REMOTE_ADDR, not X-Forwarded-For: a client can write any forwarded header it likes.
    address = request.META.get("REMOTE_ADDR", "") if request else ""
    return sha256_hex(f"{username.strip().lower()}|{address}")
