from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from accounts.models import ApiKey, RateWindow


class PlanRateThrottle(BaseThrottle):
    """Requests per second per API key, as the key's plan allows.

    Counted where every web process sees the same count: in Redis when there is one,
    else in the database (one atomic upsert per request). A fixed one-second window:
    cheap, and at worst lets a burst of twice the rate straddle a second boundary.
    """

    wait_seconds = 1.0

    def allow_request(self, request: Request, view: Any) -> bool:
        key = request.auth
        if not isinstance(key, ApiKey):
            return True
        now = time.time()
        window = int(now)
        self.wait_seconds = window + 1 - now
        return _hit(key.pk, window) <= key.account.plan.requests_per_second

    def wait(self) -> float:
        return self.wait_seconds


def _hit(key_id: int, window: int) -> int:
    if not settings.REDIS_URL:
        return RateWindow.objects.hit(key_id=key_id, second=window)
    counter = f"rate:{key_id}:{window}"
    if cache.add(counter, 1, timeout=3):
        return 1
    try:
        return cache.incr(counter)
    except ValueError:  # expired between add and incr
        cache.add(counter, 1, timeout=3)
        return 1
