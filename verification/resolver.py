"""The engine's DNS side, wired to settings and the shared domain cache."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache, partial

from django.conf import settings

from lib import metrics
from verification.engine import BatchResolver, ResolverConfig, lookup_domains
from verification.engine.core import DomainLookup
from verification.engine.dns import DomainAnswer
from verification.models import DomainRecord


def resolver_config() -> ResolverConfig:
    return ResolverConfig(
        nameservers=tuple(settings.VERIFIER_DNS_NAMESERVERS),
        timeout=settings.VERIFIER_DNS_TIMEOUT,
        lifetime=settings.VERIFIER_DNS_LIFETIME,
        concurrency=settings.VERIFIER_DNS_CONCURRENCY,
        max_qps=settings.VERIFIER_DNS_MAX_QPS or None,
        ttl_bounds=(settings.VERIFIER_DOMAIN_TTL_MIN, settings.VERIFIER_DOMAIN_TTL_MAX),
    )


class CountedResolver(BatchResolver):
    """The engine's resolver, each domain that went to DNS counted by outcome (verifier_dns_queries_total)."""

    def resolve(self, domains: Iterable[str]) -> dict[str, DomainAnswer]:
        answers = super().resolve(domains)
        metrics.dns_queries_counted(answer.status for answer in answers.values())
        return answers


@cache
def _resolver(config: ResolverConfig) -> BatchResolver:
    return CountedResolver(config)


def domain_lookup() -> DomainLookup:
    """Fresh domain-cache entries first; the rest from DNS, concurrently, then cached."""
    return partial(lookup_domains, cache=DomainRecord.objects, resolver=_resolver(resolver_config()))
