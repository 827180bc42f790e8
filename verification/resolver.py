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
from verification.engine.dns import Meanwhile
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

    An answer not believed becomes a failure: `unknown`, never cached. `strict` (bulk chunks: their
    verdicts are final and many) does not lean on a finding up to VERIFIER_DNS_CANARY_SECONDS old,
    which may predate the resolver breaking: it asks the canary names in the same batch as the
    chunk's domains, after them, so the batch vouches for itself at the cost of a few concurrent queries
    and no round trip of its own. A negative answer is believed when a canary of its batch answered
    after it arrived. For those no canary vouches for (every canary failed, or the answer came
    later: a retry's, or one over TCP after a truncated reply), the full check (asked twice, shared)
    decides: broken, they are withheld; working (a lost packet), they are asked once more, in a
    batch with the canaries again, and the check decides again for those still not vouched for.
    """

    def __init__(self, config: ResolverConfig, *, strict: bool) -> None:
        super().__init__(config)
        self.strict = strict

    def resolve(self, domains: Iterable[str], *, meanwhile: Meanwhile | None = None) -> dict[str, DomainAnswer]:
        wanted = list(dict.fromkeys(domains))
        canaries = list(settings.VERIFIER_DNS_CANARIES) if self.strict else []
        if not canaries:
            answers = self._asked(wanted, meanwhile)
            self._withheld_if_broken(answers)
            return answers
        return self._vouched(wanted, canaries, again=True, meanwhile=meanwhile)

    def _vouched(
        self, domains: list[str], canaries: list[str], *, again: bool, meanwhile: Meanwhile | None = None
    ) -> dict[str, DomainAnswer]:
        """The domains' answers, asked in one batch before the canaries (see the class docstring)."""
        started = time.time()
        # The canaries go last: an answer vouches for those that arrived before it (a resolver that
        # breaks mid-batch fails the canaries too, instead of vouching for the lies that came before them).
        asked = self._asked(dict.fromkeys([*domains, *canaries]), meanwhile)
        answers = {domain: asked[domain] for domain in domains}
        negative = _unvouched(asked, answers, frozenset(canaries))
        if not negative:
            return answers
        if resolver_broken(since=started):
            self._withhold(answers, negative)
        elif again:  # working: asked once more, in case the resolver broke and recovered as they came
            answers.update(self._vouched(negative, canaries, again=False))
        # Else found working after each of two batches: believed. Withheld, an answer that comes after
        # its batch's canaries every time (over TCP, after a truncated reply) would put its chunk back
        # for ever.
        return answers

    def _asked(self, domains: Iterable[str], meanwhile: Meanwhile | None = None) -> dict[str, DomainAnswer]:
        answers = super().resolve(domains, meanwhile=meanwhile)
        metrics.dns_queries_counted(answer.status for answer in answers.values())
        return answers

    def _withheld_if_broken(self, answers: dict[str, DomainAnswer]) -> None:
        """Replace the negative answers by failures if the resolver is broken (the shared finding)."""
        negative = [domain for domain, answer in answers.items() if answer.status in UNTRUSTED]
        if negative and resolver_broken():
            self._withhold(answers, negative)

    def _withhold(self, answers: dict[str, DomainAnswer], negative: list[str]) -> None:
        answers.update((domain, DomainAnswer(domain, DomainStatus.FAILURE)) for domain in negative)
        if (withheld := _WITHHELD.get()) is not None:
            withheld.extend(negative)


def _unvouched(asked: dict[str, DomainAnswer], domains: dict[str, DomainAnswer], canaries: frozenset[str]) -> list[str]:
    """The domains' negative answers that no canary answer vouches for: one that came after every
    canary that answered, such as a retry's whose first try went unanswered (the batch's answers
    are in the order they arrived). A resolver may break between the canaries' answers and it."""
    unvouched: list[str] = []
    for domain, answer in asked.items():
        if answer.status in UNTRUSTED and domain in domains:
            unvouched.append(domain)
        elif domain in canaries and answer.mx_found:
            unvouched.clear()
    return unvouched


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
