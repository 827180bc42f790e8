"""Log-in throttling: 5 failed attempts for one username from one address lock that pair
out for 15 minutes from the first failure.

The counter lives in Django's cache. It stores the window's start next to the count and
sets the timeout explicitly, because `cache.incr` resets the timeout on some backends.
"""

from __future__ import annotations

import time

from django.core.cache import cache
from django.http import HttpRequest

from lib.tokens import sha256_hex

MAX_FAILURES = 5
WINDOW_SECONDS = 15 * 60


def login_blocked(*, username: str, request: HttpRequest | None) -> bool:
    count, _ = cache.get(_key(username, request), (0, 0.0))
    return bool(count >= MAX_FAILURES)


def login_failed(*, username: str, request: HttpRequest | None) -> None:
    key, now = _key(username, request), time.time()
    count, since = cache.get(key, (0, now))
    cache.set(key, (count + 1, since), timeout=max(1, int(since + WINDOW_SECONDS - now)))


def login_succeeded(*, username: str, request: HttpRequest | None) -> None:
    cache.delete(_key(username, request))


def _key(username: str, request: HttpRequest | None) -> str:
    # REMOTE_ADDR, not X-Forwarded-For: a client can write any forwarded header it likes.
    address = request.META.get("REMOTE_ADDR", "") if request else ""
    return "login-failures:" + sha256_hex(f"{username.strip().lower()}|{address}")
