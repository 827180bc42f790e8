"""The SMTP egresses wired to settings and the shared cache: which are healthy, which rest
(docs/deep.md, "Egresses"; the rules are verification/engine/egress.py's).

Each egress's sessions and reputation refusals are counted in the shared cache (Redis, else the
database cache) in one-minute buckets, so every process on every machine sharing the cache judges
on the same 15 minutes. A resting egress has a key of its own that expires when its rest ends;
its buckets are dropped when it starts resting, so it comes back judged afresh.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache as memoized

from django.conf import settings
from django.core.cache import cache

from verification.engine.egress import Egress, parse_egresses, should_rest

WINDOW_MINUTES = 15
# Fewer sessions than this in the window say nothing about an egress's health.
MINIMUM_SESSIONS = 20


@dataclass(frozen=True, slots=True)
class EgressHealth:
    name: str
    sessions: int  # over the window
    refused: int  # of those, refused for the egress's reputation
    resting_until: float | None  # unix time, while it rests

    @property
    def share(self) -> float:
        return self.refused / self.sessions if self.sessions else 0.0

    @property
    def resting(self) -> bool:
        return self.resting_until is not None

    @property
    def rests_until(self) -> datetime | None:
        return datetime.fromtimestamp(self.resting_until, UTC) if self.resting_until is not None else None


def egresses_configured() -> tuple[Egress, ...]:
    return _parsed(settings.VERIFIER_SMTP_EGRESS)


@memoized
def _parsed(spec: str) -> tuple[Egress, ...]:
    return parse_egresses(spec)


def egresses_healthy() -> tuple[Egress, ...]:
    """The configured egresses not resting, in their configured order (empty: every one rests)."""
    egresses = egresses_configured()
    resting = cache.get_many([_rest_key(egress.name) for egress in egresses])
    return tuple(egress for egress in egresses if _rest_key(egress.name) not in resting)


def egress_sessions_record(sessions: Mapping[str, int], refused: Mapping[str, int]) -> None:
    """Count one run's sessions per egress, and rest the egresses whose share is now too high."""
    minute = int(time.time() // 60)
    for name, count in sessions.items():
        _add(_bucket_key(name, "sessions", minute), count)
        if refused.get(name):
            _add(_bucket_key(name, "refused", minute), refused[name])
            _rest_if_refused(name)


def egress_health_all() -> list[EgressHealth]:
    """Each configured egress's window and whether it rests: the staff dashboard and /metrics."""
    return [_health(egress.name) for egress in egresses_configured()]


def _health(name: str) -> EgressHealth:
    keys = {kind: _window_keys(name, kind) for kind in ("sessions", "refused")}
    found = cache.get_many([*keys["sessions"], *keys["refused"], _rest_key(name)])
    total = {kind: sum(int(found.get(key, 0)) for key in keys[kind]) for kind in keys}
    until = found.get(_rest_key(name))
    return EgressHealth(name, total["sessions"], total["refused"], float(until) if until is not None else None)


def _rest_if_refused(name: str) -> None:
    health = _health(name)
    share = settings.VERIFIER_SMTP_EGRESS_BLOCKED_SHARE
    if health.resting or not should_rest(health.sessions, health.refused, minimum=MINIMUM_SESSIONS, share=share):
        return
    rest = settings.VERIFIER_SMTP_EGRESS_REST_SECONDS
    cache.set(_rest_key(name), time.time() + rest, timeout=rest)
    cache.delete_many([*_window_keys(name, "sessions"), *_window_keys(name, "refused")])


def _add(key: str, count: int) -> None:
    cache.add(key, 0, timeout=(WINDOW_MINUTES + 1) * 60)
    try:
        cache.incr(key, count)
    except ValueError:  # expired between the two calls
        cache.set(key, count, timeout=(WINDOW_MINUTES + 1) * 60)


def _window_keys(name: str, kind: str) -> list[str]:
    minute = int(time.time() // 60)
    return [_bucket_key(name, kind, m) for m in range(minute - WINDOW_MINUTES + 1, minute + 1)]


def _slug(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:16]


def _bucket_key(name: str, kind: str, minute: int) -> str:
    return f"verifier:egress:{_slug(name)}:{kind}:{minute}"


def _rest_key(name: str) -> str:
    return f"verifier:egress-rest:{_slug(name)}"
