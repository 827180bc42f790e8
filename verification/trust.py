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
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from verification.engine import BatchResolver

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ResolverHealth:
    broken: bool
    checked_at: float  # unix time the check began (its canary queries were sent after it)
    failing: dict[str, str]  # canary -> what it got (nxdomain, no_mx, failure), when it failed

    def describe(self) -> str:
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
    stored = cache.get(key)
    if isinstance(stored, dict) and (since is None or stored["checked_at"] >= since):
        return ResolverHealth(**stored)
    health = _check(resolver, canaries)
    cache.set(
        key,
        {"broken": health.broken, "checked_at": health.checked_at, "failing": health.failing},
        timeout=settings.VERIFIER_DNS_CANARY_SECONDS,
    )
    return health


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
