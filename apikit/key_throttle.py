from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from accounts.models import ApiKey, LoginWindow
from apikit.models import RateWindow
from lib.client_address import client_address

WINDOW_SECONDS = 1


@dataclass(frozen=True, slots=True)
class RateLimit:
    """Where a key stands in its current window, as the RateLimit header fields announce it
    (draft-ietf-httpapi-ratelimit-headers: structured fields, one policy named "plan")."""

    quota: int
    remaining: int
    reset_seconds: int

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Policy": f'"plan";q={self.quota};w={WINDOW_SECONDS}',
            "RateLimit": f'"plan";r={self.remaining};t={self.reset_seconds}',
        }


class PlanRateThrottle(BaseThrottle):
    """Requests per second per API key, as the key's plan allows.

    Counted where every web process sees the same count: in Redis when there is one,
    else in the database (one atomic upsert per request). A fixed one-second window:
    cheap, and at worst lets a burst of twice the rate straddle a second boundary.
    What it counted is left on the request (`rate_limit`) for the response's headers.
    """

    wait_seconds = 1.0

    def allow_request(self, request: Request, view: Any) -> bool:
        key = request.auth
        if not isinstance(key, ApiKey):
            return True
        now = time.time()
        window = int(now)
        self.wait_seconds = window + WINDOW_SECONDS - now
        quota = key.account.plan.requests_per_second
        hits = _hit(key.pk, window)
        reset = max(1, math.ceil(self.wait_seconds))
        request.rate_limit = RateLimit(quota, max(0, quota - hits), reset)  # type: ignore[attr-defined]
        return hits <= quota

    def wait(self) -> float:
        return self.wait_seconds


class PublishableAddressThrottle(BaseThrottle):
    """A publishable key's requests per end-user address: PUBLISHABLE_PER_IP_PER_HOUR an hour for
    each address, across the account's publishable keys, so a bot filling a form from one address
    is stopped long before it drains the key (docs/widget.md, "Abuse"). Counted after the key's
    origin was accepted, in the database's atomic window counter (`LoginWindow.objects.attempt_wait`)."""

    wait_seconds = 1.0

    def allow_request(self, request: Request, view: Any) -> bool:
        key = request.auth
        if not isinstance(key, ApiKey) or not key.is_publishable:
            return True
        wait = LoginWindow.objects.attempt_wait(
            scope=f"publishable:{key.account_id}",
            key=client_address(request),
            limit=settings.PUBLISHABLE_PER_IP_PER_HOUR,
            window_seconds=3600,
            now=time.time(),
        )
        self.wait_seconds = wait or 0.0
        return wait is None

    def wait(self) -> float:
        return self.wait_seconds


def rate_limit_of(request: Request) -> RateLimit | None:
    return getattr(request, "rate_limit", None)


def _hit(key_id: int, window: int) -> int:
    if not settings.REDIS_URL:
        return RateWindow.objects.hit(key_id=key_id, second=window)
    counter = f"rate:{key_id}:{window}"
    # One round trip (MULTI, INCR, EXPIRE, EXEC), where the cache API took three (`add` to start
    # the window, then `incr`, which asks whether the key exists first) and built a client for each
    # call. The window's key outlives its second by a little: each hit in it pushes its expiry on.
    pipeline = _redis(settings.REDIS_URL).pipeline()
    pipeline.incr(counter)
    pipeline.expire(counter, WINDOW_SECONDS + 2)
    hits, _ = pipeline.execute()
    return int(hits)


@functools.cache
def _redis(url: str) -> redis.Redis:
    """This process's client for the rate counters: thread-safe, over a connection pool of its own."""
    return redis.Redis.from_url(url)
