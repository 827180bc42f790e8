"""The engine's DNS side, wired to settings, the shared domain cache and resolver trust."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache, partial

from django.conf import settings

from lib import metrics
from verification import canaries
from verification.engine import BatchResolver, DomainAnswer, DomainStatus, ResolverConfig, lookup_domains
from verification.engine.core import DomainLookup
from verification.models import DomainRecord

# What a lying resolver says of every name; a null MX is a record someone published, not a lie.
UNTRUSTED = frozenset({DomainStatus.NXDOMAIN, DomainStatus.NO_MX})
# The domains whose answers were not believed, inside an `answers_withheld` block (a bulk chunk's).
_WITHHELD: ContextVar[list[str] | None] = ContextVar("withheld", default=None)


@contextmanager
def answers_withheld() -> Iterator[list[str]]:
    """Collect the domains whose answers the block's lookups did not believe: a bulk chunk with any
    waits, whatever the resolver's state by the time the chunk ends."""
    withheld: list[str] = []
    token = _WITHHELD.set(withheld)
    try:
        yield withheld
    finally:
        _WITHHELD.reset(token)


def resolver_config() -> ResolverConfig:
    return ResolverConfig(
        nameservers=tuple(settings.VERIFIER_DNS_NAMESERVERS),
        timeout=settings.VERIFIER_DNS_TIMEOUT,
        lifetime=settings.VERIFIER_DNS_LIFETIME,
        concurrency=settings.VERIFIER_DNS_CONCURRENCY,
        max_qps=settings.VERIFIER_DNS_MAX_QPS or None,
        ttl_bounds=(settings.VERIFIER_DOMAIN_TTL_MIN, settings.VERIFIER_DOMAIN_TTL_MAX),
    )


class TrustedResolver(BatchResolver):
    """The engine's resolver, each domain that went to DNS counted by outcome (verifier_dns_queries_total),
    whose NXDOMAIN and no-MX answers count only while the resolver is not broken (verification/canaries.py).

    An answer not believed becomes a failure: `unknown`, never cached. `strict` asks for a finding whose
    canary queries went out after these answers came, not one up to VERIFIER_DNS_CANARY_SECONDS old
    (bulk chunks: their verdicts are final and many): a check begun earlier, even by a moment, may
    have been answered before the resolver broke and these answers after. And since answers may also
    have come just before it recovered, a negative answer is believed only when asked once more
    after a finding that the resolver works.
    """

    def __init__(self, config: ResolverConfig, *, strict: bool) -> None:
        super().__init__(config)
        self.strict = strict

    def resolve(self, domains: Iterable[str]) -> dict[str, DomainAnswer]:
        answers = self._asked(domains)
        negative = self._withheld_if_broken(answers, answered_at=time.time())
        if negative and self.strict:
            # The canaries answer now, but these answers may have come just before the resolver recovered:
            # ask again, and believe a second "no" only if the resolver has not broken meanwhile.
            again = self._asked(negative)
            answers.update(again)
            self._withheld_if_broken(again, answered_at=time.time())
        return answers

    def _asked(self, domains: Iterable[str]) -> dict[str, DomainAnswer]:
        answers = super().resolve(domains)
        metrics.dns_queries_counted(answer.status for answer in answers.values())
        return answers

    def _withheld_if_broken(self, answers: dict[str, DomainAnswer], *, answered_at: float) -> list[str]:
        """Replace the negative answers by failures if the resolver is broken; else return them."""
        negative = [domain for domain, answer in answers.items() if answer.status in UNTRUSTED]
        if not negative or not resolver_broken(since=answered_at if self.strict else None):
            return negative
        answers.update((domain, DomainAnswer(domain, DomainStatus.FAILURE)) for domain in negative)
        if (withheld := _WITHHELD.get()) is not None:
            withheld.extend(negative)
        return []


@cache
def _resolver(config: ResolverConfig, strict: bool) -> TrustedResolver:
    return TrustedResolver(config, strict=strict)


@cache
def _canary_resolver(config: ResolverConfig) -> BatchResolver:
    return BatchResolver(config)


@cache
def _probe_resolver(config: ResolverConfig) -> BatchResolver:
    return BatchResolver(config)  # the probes' background check's own: never asked from two threads at once


def domain_lookup(*, strict: bool = False) -> DomainLookup:
    """Fresh domain-cache entries first; the rest from DNS, concurrently, then cached."""
    resolver = _resolver(resolver_config(), strict)
    return partial(lookup_domains, cache=DomainRecord.objects, resolver=resolver)


def resolver_health(*, since: float | None = None) -> canaries.ResolverHealth | None:
    """The configured resolver's health (None when VERIFIER_DNS_CANARIES is empty)."""
    return canaries.resolver_health(_canary_resolver(resolver_config()), since=since)


def resolver_health_within(seconds: float) -> canaries.ResolverHealth | None:
    """The configured resolver's health for a probe, which may not wait longer than `seconds`."""
    return canaries.resolver_health_within(_probe_resolver(resolver_config()), seconds)


def resolver_last_finding() -> canaries.ResolverHealth | None:
    """What the last canary check found, without asking DNS (pages that only show it)."""
    return canaries.last_finding(_canary_resolver(resolver_config()))


def resolver_broken(*, since: float | None = None) -> bool:
    health = resolver_health(since=since)
    return health is not None and health.broken
