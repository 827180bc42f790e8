"""An MX host's addresses (A, then AAAA), asked of the configured nameservers, never of the
system's name lookup (getaddrinfo): a host name read from DNS is resolved by DNS alone.

A host lookup may take up to HOST_LOOKUP_SECONDS, asked again every `timeout` meanwhile, however
short the domain lookups' lifetime (VERIFIER_DNS_LIFETIME, tuned for a bulk chunk's thousands of
domains): an MX host whose A answer comes late is not the same as one with no address, and taking
it for one would hand its recipients to a backup host (or answer them smtp_unreachable) for a
lost UDP packet. A lookup runs once per host and batch, beside sessions that take seconds."""

from __future__ import annotations

import asyncio
import ipaddress

import dns.asyncresolver
import dns.exception
import dns.nameserver
import dns.resolver

from verification.engine.dns import ResolverConfig, parse_nameserver, system_nameservers
from verification.engine.smtp_scheduling import HostResolver

# The least time a host lookup may take (retries included), whatever VERIFIER_DNS_LIFETIME says.
HOST_LOOKUP_SECONDS = 3.0


def host_resolver(config: ResolverConfig) -> HostResolver:
    """A cached lookup of MX hosts' addresses for one batch of sessions."""
    specs = config.nameservers
    servers = [parse_nameserver(spec) for spec in specs] if specs else list(system_nameservers())
    resolver = dns.asyncresolver.Resolver(configure=False)
    resolver.nameservers = [dns.nameserver.Do53Nameserver(address, port) for address, port in servers]
    resolver.timeout, resolver.lifetime = config.timeout, max(config.lifetime, HOST_LOOKUP_SECONDS)
    found: dict[str, asyncio.Task[list[str]]] = {}

    async def addresses(host: str) -> list[str]:
        if host not in found:
            found[host] = asyncio.ensure_future(_addresses(resolver, host))
        return await found[host]

    return addresses


async def _addresses(resolver: dns.asyncresolver.Resolver, host: str) -> list[str]:
    try:
        return [str(ipaddress.ip_address(host))]  # an MX naming an address literal
    except ValueError:
        pass
    found: list[str] = []
    for rdtype in ("A", "AAAA"):
        try:
            answer = await resolver.resolve(host, rdtype, search=False)
        except (dns.exception.DNSException, dns.resolver.NoNameservers):
            continue
        found.extend(record.to_text() for record in answer)
    return found
