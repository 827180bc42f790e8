"""MX lookups for many domains at once, with dnspython's async resolver.

Each domain ends in one :class:`DomainAnswer`. Definitive answers (MX found,
no MX, null MX, NXDOMAIN) carry a TTL and may be cached; failures (timeout,
SERVFAIL, no nameserver answering) are never cached.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

import dns.asyncresolver
import dns.exception
import dns.message
import dns.name
import dns.nameserver
import dns.rdatatype
import dns.resolver

# Negative answers without an SOA to read a TTL from are kept this long.
_DEFAULT_NEGATIVE_TTL = 300


class DomainStatus(StrEnum):
    MX = "mx"
    NO_MX = "no_mx"
    NULL_MX = "null_mx"
    NXDOMAIN = "nxdomain"
    FAILURE = "failure"


@dataclass(frozen=True, slots=True)
class DomainAnswer:
    domain: str
    status: DomainStatus
    ttl: int = 0
    mx_hosts: tuple[str, ...] = ()

    @property
    def exists(self) -> bool:
        return self.status in (DomainStatus.MX, DomainStatus.NO_MX, DomainStatus.NULL_MX)

    @property
    def mx_found(self) -> bool:
        return self.status is DomainStatus.MX

    @property
    def cacheable(self) -> bool:
        return self.status is not DomainStatus.FAILURE


@dataclass(frozen=True, slots=True)
class ResolverConfig:
    nameservers: tuple[str, ...] = ()  # "host" or "host:port"; empty means the system's
    timeout: float = 3.0
    lifetime: float = 3.0
    concurrency: int = 256
    ttl_bounds: tuple[int, int] = field(default=(60, 6 * 3600))


class DomainCache(Protocol):
    def get_many(self, domains: Collection[str]) -> dict[str, DomainAnswer]: ...

    def put_many(self, answers: Iterable[DomainAnswer]) -> None: ...


def make_resolver(config: ResolverConfig) -> dns.asyncresolver.Resolver:
    resolver = dns.asyncresolver.Resolver(configure=not config.nameservers)
    if config.nameservers:
        resolver.nameservers = [_nameserver(spec) for spec in config.nameservers]
    resolver.timeout = config.timeout
    resolver.lifetime = config.lifetime
    resolver.cache = None  # our own domain cache sits in front, shared across processes
    return resolver


def _nameserver(spec: str) -> dns.nameserver.Nameserver:
    host, port = spec, 53
    if spec.startswith("["):  # [::1]:5353
        host, _, rest = spec[1:].partition("]")
        port = int(rest.lstrip(":") or 53)
    elif spec.count(":") == 1:
        host, raw_port = spec.split(":")
        port = int(raw_port)
    return dns.nameserver.Do53Nameserver(host, port)


def lookup_domains(
    domains: Collection[str], *, cache: DomainCache, resolver: dns.asyncresolver.Resolver, config: ResolverConfig
) -> dict[str, DomainAnswer]:
    """Answers for every domain: from the cache where fresh, else from DNS (then cached)."""
    found = cache.get_many(domains) if domains else {}
    missing = [d for d in domains if d not in found]
    if missing:
        fresh = asyncio.run(resolve_domains(missing, resolver=resolver, config=config))
        cache.put_many(answer for answer in fresh.values() if answer.cacheable)
        found.update(fresh)
    return found


async def resolve_domains(
    domains: Iterable[str], *, resolver: dns.asyncresolver.Resolver, config: ResolverConfig
) -> dict[str, DomainAnswer]:
    gate = asyncio.Semaphore(config.concurrency)

    async def one(domain: str) -> DomainAnswer:
        async with gate:
            return await resolve_domain(domain, resolver=resolver, ttl_bounds=config.ttl_bounds)

    answers = await asyncio.gather(*(one(d) for d in domains))
    return {answer.domain: answer for answer in answers}


async def resolve_domain(
    domain: str, *, resolver: dns.asyncresolver.Resolver, ttl_bounds: tuple[int, int]
) -> DomainAnswer:
    low, high = ttl_bounds
    try:
        answer = await resolver.resolve(domain + ".", "MX", raise_on_no_answer=False)
    except dns.resolver.NXDOMAIN as exc:
        ttl = _negative_ttl(exc.responses().values())
        return DomainAnswer(domain, DomainStatus.NXDOMAIN, _clamp(ttl, low, high))
    except (dns.exception.DNSException, OSError):
        return DomainAnswer(domain, DomainStatus.FAILURE)
    if answer.rrset is None:
        ttl = _negative_ttl([answer.response])
        return DomainAnswer(domain, DomainStatus.NO_MX, _clamp(ttl, low, high))
    hosts = tuple(
        rr.exchange.to_text(omit_final_dot=True).lower()
        for rr in sorted(answer.rrset, key=lambda rr: rr.preference)
        if rr.exchange != dns.name.root
    )
    status = DomainStatus.MX if hosts else DomainStatus.NULL_MX
    return DomainAnswer(domain, status, _clamp(answer.rrset.ttl, low, high), hosts)


def _negative_ttl(responses: Iterable[dns.message.Message | None]) -> int:
    """RFC 2308: a negative answer lives for min(SOA TTL, SOA MINIMUM)."""
    for response in responses:
        if response is None:
            continue
        for rrset in response.authority:
            if rrset.rdtype == dns.rdatatype.SOA:
                return min(rrset.ttl, rrset[0].minimum)
    return _DEFAULT_NEGATIVE_TTL


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))
