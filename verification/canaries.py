"""Resolver trust: may the resolver's "no such domain" judge an address?

A resolver behind captive DNS, a corporate resolver without recursion or a mistyped
VERIFIER_DNS_NAMESERVERS answers NXDOMAIN (or REFUSED, or nothing) for every outside name.
Believed, it would make every address `invalid`, `someone@gmail.com` included, and a customer
would delete real contacts on our word. So the service asks it about names that certainly have
MX records (VERIFIER_DNS_CANARIES): when every canary fails, and fails again when asked once
more, the resolver is broken. One lost packet is not a broken resolver: the resolver already
asks a timed-out query again for its whole lifetime, and the check itself is asked twice.

The finding lives in the shared cache (Redis, else the database cache) for
VERIFIER_DNS_CANARY_SECONDS, so every web and worker process, on every machine, acts on the same
one and the resolver is asked at most once that often. What it changes is in README.md, "When
the resolver lies".

A readiness probe cannot wait for a silent resolver (a check then takes two DNS lifetimes, and
probes time out after a few seconds): `resolver_health_within` runs the check off the request
path, in a thread of its own, and answers meanwhile from the last finding (README,
"Operations").
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.core.cache import cache

from verification.engine import BatchResolver

logger = logging.getLogger(__name__)
# How long the last finding stands in for a fresh one while a probe's check is still running.
LAST_FINDING_SECONDS = 3600
_running: dict[str, Future[ResolverHealth]] = {}  # the probes' background checks
_inline: dict[str, tuple[float, Future[ResolverHealth]]] = {}  # checks run by a caller, with when each began
_running_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class ResolverHealth:
    broken: bool
    checked_at: float  # unix time the check began (its canary queries were sent after it)
    failing: dict[str, str] = field(default_factory=dict)  # canary -> what it got (nxdomain, no_mx, failure)
    checking: bool = False  # no finding yet: the first check is still waiting for the canaries

    def describe(self) -> str:
        if self.checking:
            return "checking: the canary names have not answered yet"
        if not self.broken:
            return "ok"
        return "broken: every canary name failed (" + ", ".join(f"{n} {s}" for n, s in self.failing.items()) + ")"


def resolver_health(resolver: BatchResolver, *, since: float | None = None) -> ResolverHealth | None:
    """The resolver's health, checked anew when the shared finding is older than
    VERIFIER_DNS_CANARY_SECONDS or began before `since` (unix time). None when the check is off."""
    canaries = tuple(settings.VERIFIER_DNS_CANARIES)
    if not canaries:
        return None
    key = _key(resolver, canaries)
    if (stored := _stored(key, since=since)) is not None:
        return stored
    return _checked(key, resolver, canaries, since=since)


def _checked(key: str, resolver: BatchResolver, canaries: tuple[str, ...], *, since: float | None) -> ResolverHealth:
    """A check run here, or the one another thread of this process has under way, if it began after
    `since`: web threads finding the finding stale at the same moment wait for one check, not one each."""
    with _running_lock:
        running = _inline.get(key)
        joined = running is not None and (since is None or running[0] >= since)
        if not joined:
            running = _inline[key] = (time.time(), Future())
    assert running is not None
    future = running[1]
    if joined:
        return future.result()
    try:
        health = _check(resolver, canaries)
        _store(key, health)  # before the check is let go: a caller coming after it finds the finding
        future.set_result(health)
    except BaseException as exc:
        future.set_exception(exc)
        raise
    finally:
        with _running_lock:
            if _inline.get(key) is running:
                del _inline[key]
    return health


def resolver_health_within(resolver: BatchResolver, seconds: float) -> ResolverHealth | None:
    """The resolver's health without waiting more than `seconds` (readiness probes): a fresh shared
    finding, else a check run in the background, waited for that long; meanwhile the last finding
    (up to LAST_FINDING_SECONDS old), or one saying the check is under way. Never "broken" unless a
    whole check found it so. `resolver` is used by the background thread alone. None when off."""
    canaries = tuple(settings.VERIFIER_DNS_CANARIES)
    if not canaries:
        return None
    key = _key(resolver, canaries)
    if (stored := _stored(key)) is not None:
        return stored
    running = _background_check(key, resolver, canaries)
    try:
        health = running.result(timeout=seconds)
    except FutureTimeout:
        return _stored(key, fresh=False) or ResolverHealth(broken=False, checked_at=time.time(), checking=True)
    with _running_lock:
        if _running.get(key) is running:
            del _running[key]
    _store(key, health)
    return health


def last_finding(resolver: BatchResolver) -> ResolverHealth | None:
    """The last check's finding (up to LAST_FINDING_SECONDS old), read from the shared cache: asks no DNS.
    None when the check is off or nothing was found yet."""
    canaries = tuple(settings.VERIFIER_DNS_CANARIES)
    return _stored(_key(resolver, canaries), fresh=False) if canaries else None


def _background_check(key: str, resolver: BatchResolver, canaries: tuple[str, ...]) -> Future[ResolverHealth]:
    """The check under way for `key`, started if there is none; a check that ended longer ago than
    a finding is trusted (no probe came since) is replaced, never passed off as fresh."""
    with _running_lock:
        running = _running.get(key)
        if running is None or (running.done() and (running.exception() or _stale(running.result()))):
            running = _running[key] = Future()
            threading.Thread(target=_check_into, args=(running, resolver, canaries), daemon=True).start()
        return running


def _check_into(future: Future[ResolverHealth], resolver: BatchResolver, canaries: tuple[str, ...]) -> None:
    """A background check: a thread of its own, so a silent resolver's holds up no other's."""
    try:
        future.set_result(_check(resolver, canaries))
    except Exception as exc:  # kept for the probe that waits on it, which reports it
        future.set_exception(exc)


def _stale(health: ResolverHealth) -> bool:
    return time.time() - health.checked_at > settings.VERIFIER_DNS_CANARY_SECONDS


def _stored(key: str, *, since: float | None = None, fresh: bool = True) -> ResolverHealth | None:
    """The shared finding: trusted VERIFIER_DNS_CANARY_SECONDS, kept LAST_FINDING_SECONDS (for probes)."""
    stored = cache.get(key)
    if not isinstance(stored, dict):
        return None
    health = ResolverHealth(**stored)
    if (fresh and _stale(health)) or (since is not None and health.checked_at < since):
        return None
    return health


def _store(key: str, health: ResolverHealth) -> None:
    cache.set(key, asdict(health), timeout=LAST_FINDING_SECONDS)


def _check(resolver: BatchResolver, canaries: tuple[str, ...]) -> ResolverHealth:
    started = time.time()  # the finding holds from here: answers given before it are not vouched for
    failing = _failing(resolver, canaries)
    if len(failing) == len(canaries):  # believed only when a second try says the same
        failing = _failing(resolver, canaries)
    broken = len(failing) == len(canaries)
    if broken:
        logger.error("DNS resolver %s is broken: every canary name failed %s", resolver.nameservers, failing)
    return ResolverHealth(broken=broken, checked_at=started, failing=failing if broken else {})


def _failing(resolver: BatchResolver, canaries: tuple[str, ...]) -> dict[str, str]:
    answers = resolver.resolve(canaries)
    return {name: answers[name].status.value for name in canaries if not answers[name].mx_found}


def _key(resolver: BatchResolver, canaries: tuple[str, ...]) -> str:
    """One finding per resolver and canary list: deployments sharing a cache may not share a resolver."""
    identity = repr((resolver.nameservers, canaries)).encode()
    return "verifier:dns-resolver:" + hashlib.sha256(identity).hexdigest()[:16]
