"""The SMTP egresses wired to settings and the shared cache: which are healthy, which rest
(docs/deep.md, "Egresses"; the rules are verification/engine/egress.py's).

Each egress's sessions and reputation refusals are counted in the shared cache (Redis, else the
database cache) in one-minute buckets, so every process on every machine sharing the cache judges
on the same 15 minutes. A resting egress has a key of its own that expires when its rest ends;
its buckets are dropped when it starts resting, so it comes back judged afresh. An egress a
blocklist lists rests too, until the self-checks find it delisted (verification/egress_checks.py).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache as memoized

from django.conf import settings
from django.core.cache import cache

from verification import egress_checks
from verification.egress_checks import IdentityFinding, ZoneFinding, egress_key
from verification.engine.egress import ANY_REGION, Egress, parse_egresses, should_rest
from verification.engine.egress_dns import IdentityState, Listing

WINDOW_MINUTES = 15
# Fewer sessions than this in the window say nothing about an egress's health.
MINIMUM_SESSIONS = 20


@dataclass(frozen=True, slots=True)
class EgressHealth:
    name: str
    sessions: int  # over the window
    refused: int  # of those, refused for the egress's reputation
    resting_until: float | None  # unix time, while it rests for its refusals
    identity: IdentityFinding | None = None  # None: not checked (yet)
    zones: tuple[ZoneFinding, ...] = ()  # what each blocklist said of its address

    @property
    def share(self) -> float:
        return self.refused / self.sessions if self.sessions else 0.0

    @property
    def listed(self) -> tuple[ZoneFinding, ...]:
        return tuple(zone for zone in self.zones if zone.listing is Listing.LISTED)

    @property
    def zone_errors(self) -> tuple[ZoneFinding, ...]:
        return tuple(zone for zone in self.zones if zone.listing is Listing.ERROR)

    @property
    def resting(self) -> bool:
        return self.resting_until is not None or bool(self.listed)

    @property
    def misconfigured(self) -> bool:
        return self.identity is not None and self.identity.state is IdentityState.MISCONFIGURED

    @property
    def healthy(self) -> bool:
        """Takes sessions and says who it is correctly: verifier_smtp_egress_healthy."""
        return not self.resting and not self.misconfigured

    def describe(self) -> str:
        """Its state in words (/readyz)."""
        said = [zone.describe() for zone in (*self.listed, *self.zone_errors)]
        if self.resting_until is not None:
            said.append(f"resting until {self.rests_until:%Y-%m-%d %H:%M} UTC after reputation refusals")
        if self.identity is not None and self.identity.state is not IdentityState.CONFIRMED:
            said.append(f"{self.identity.state}: {self.identity.reason}")
        return "; ".join(said) or ("ok" if self.identity else "ok (identity not checked yet)")

    @property
    def rests_until(self) -> datetime | None:
        return datetime.fromtimestamp(self.resting_until, UTC) if self.resting_until is not None else None


def egresses_configured() -> tuple[Egress, ...]:
    return _parsed(settings.VERIFIER_SMTP_EGRESS)


@memoized
def _parsed(spec: str) -> tuple[Egress, ...]:
    return parse_egresses(spec)


def egresses_healthy() -> tuple[Egress, ...]:
    """The configured egresses not resting, in their configured order (empty: every one rests). A
    misconfigured identity does not rest an egress: it is shown, and it goes on carrying sessions."""
    egresses = egresses_configured()
    resting = cache.get_many([_rest_key(egress.name) for egress in egresses])
    listed = {name for name, zones in egress_checks.zone_findings(egresses).items() if _any_listed(zones)}
    return tuple(egress for egress in egresses if _rest_key(egress.name) not in resting and egress.name not in listed)


def egress_self_checks_run() -> None:
    """The one-minute schedule: each egress's identity and blocklist checks that are due."""
    if settings.VERIFIER_DEEP_MODE:
        egress_checks.checks_run(egresses_configured())


def _any_listed(zones: list[ZoneFinding]) -> bool:
    return any(zone.listing is Listing.LISTED for zone in zones)


def egress_sessions_record(sessions: Mapping[str, int], refused: Mapping[str, int]) -> None:
    """Count one run's sessions per egress, and rest the egresses whose share is now too high."""
    minute = int(time.time() // 60)
    for name, count in sessions.items():
        _add(_bucket_key(name, "sessions", minute), count)
        if refused.get(name):
            _add(_bucket_key(name, "refused", minute), refused[name])
            _rest_if_refused(name)


def egress_health_all() -> list[EgressHealth]:
    """Each configured egress's window, whether it rests and what its self-checks found: the staff
    dashboard, /readyz and /metrics."""
    return [_health(egress) for egress in egresses_configured()]


def _health(egress: Egress) -> EgressHealth:
    name = egress.name
    keys = {kind: _window_keys(name, kind) for kind in ("sessions", "refused")}
    checks = [egress_checks.identity_key(name), egress_checks.blocklists_key(name)]
    found = cache.get_many([*keys["sessions"], *keys["refused"], _rest_key(name), *checks])
    total = {kind: sum(int(found.get(key, 0)) for key in keys[kind]) for kind in keys}
    until = found.get(_rest_key(name))
    return EgressHealth(
        name,
        total["sessions"],
        total["refused"],
        float(until) if until is not None else None,
        identity=egress_checks.identity_read(found.get(checks[0]), egress),
        zones=tuple(egress_checks.zones_read(found.get(checks[1]), egress)),
    )


def _rest_if_refused(name: str) -> None:
    configured = {egress.name: egress for egress in egresses_configured()}
    health = _health(configured.get(name, Egress(name)))  # an egress no longer configured: its name alone
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


def _bucket_key(name: str, kind: str, minute: int) -> str:
    return f"{egress_key('egress', name)}:{kind}:{minute}"


def _rest_key(name: str) -> str:
    return egress_key("egress-rest", name)


def egresses_of_region(region: str) -> tuple[Egress, ...] | None:
    """The healthy egresses an account pinned to `region` may use (empty: none, so its deep rows are
    smtp_blocked at once, free); None for `any`: deep mode chooses among them all, as it always has."""
    if region == ANY_REGION:
        return None
    return tuple(egress for egress in egresses_healthy() if egress.region == region)
