"""Readiness checks (README, "Operations"): each answers "ok" or a short reason, and never raises.

A reason names the failure's kind (the exception's class), never its message: a driver's
message may hold a host name, a user or a path, and /readyz answers anyone.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection
from django.utils import timezone

from lib.tokens import random_base62
from ops import machine
from verification.egresses import egress_health_all
from verification.resolver import resolver_health_within

OK = "ok"
# A qcluster that has not reported for this long is taken for dead.
HEARTBEAT_WITHIN = timedelta(minutes=2)
# The longest /readyz waits for a canary check; a silent resolver's takes two DNS lifetimes.
DNS_CHECK_WAIT = 0.5


def database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return OK


def redis_cache() -> str:
    key = "readyz:" + random_base62(8)
    cache.set(key, "1", timeout=10)
    return OK if cache.get(key) == "1" else "cache did not keep a value"


def storage() -> str:
    name = default_storage.save(f"readyz/{random_base62(12)}", ContentFile(b"ok"))
    default_storage.delete(name)
    return OK


def workers() -> str:
    recent = timezone.now() - HEARTBEAT_WITHIN
    if any(beat.at >= recent for beat in machine.heartbeats()):
        return OK
    return "no qcluster heartbeat in the last 2 minutes"


def dns() -> str:
    """The resolver answers for the canary names (verification/canaries.py): else no verdict is final.
    A check that takes longer runs on in the background; meanwhile the last finding answers."""
    health = resolver_health_within(DNS_CHECK_WAIT)
    return OK if health is None else health.describe()


def egresses() -> dict[str, str]:
    """Each SMTP egress's state in words: misconfigured, listed, resting, or ok (verification/egresses.py)."""
    return {health.name: health.describe() for health in egress_health_all()}


def run_detail(detail: Callable[[], dict[str, str]]) -> dict[str, str]:
    try:
        return detail()
    except Exception as exc:  # as run(): a probe never fails itself
        return {"failed": type(exc).__name__}


def run(check: Callable[[], str]) -> str:
    try:
        return check()
    except Exception as exc:  # a probe reports every failure, it never fails itself
        return f"failed: {type(exc).__name__}"


def readiness() -> dict[str, str]:
    checks: dict[str, Callable[[], str]] = {"database": database, "storage": storage, "workers": workers}
    if settings.REDIS_URL:
        checks["cache"] = redis_cache
    if settings.VERIFIER_DNS_CANARIES:
        checks["dns"] = dns
    return {name: run(check) for name, check in checks.items()}
