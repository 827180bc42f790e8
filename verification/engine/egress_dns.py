"""What DNS says of an egress (docs/deep.md, "Running deep mode on the internet"): whether its EHLO
name and its address name each other (forward-confirmed reverse DNS), and whether a blocklist
(DNSBL) lists its address.

Mail servers ask the same questions before they answer us: Postfix's
reject_unknown_client_hostname wants the address's PTR name to resolve back to the address, and a
listed address is refused everywhere. The rules here are pure; the lookups go to the service's
own nameservers through dnspython's stub resolver (a few queries an hour, not a batch's
thousands: the hand-made wire code of dnswire.py is not needed), never getaddrinfo.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import dns.exception
import dns.name
import dns.nameserver
import dns.resolver
import dns.reversename

from verification.engine.dns import Nameserver

# A DNSBL answers a listing with an address in 127.0.0.0/8; 127.255.255.0/24 is how it says it
# refuses the query itself (Spamhaus's 127.255.255.254: a public resolver, 127.255.255.255: over
# the free use limit), which says nothing of the address asked about.
_LISTED = ipaddress.ip_network("127.0.0.0/8")
_ZONE_REFUSES = ipaddress.ip_network("127.255.255.0/24")


class Found(StrEnum):
    RECORDS = "records"
    NONE = "none"  # NXDOMAIN, or the name has no record of that type
    FAILED = "failed"  # no nameserver answered in time, or each refused: DNS cannot say


@dataclass(frozen=True, slots=True)
class Records:
    found: Found
    values: tuple[str, ...] = ()  # addresses, or PTR names (lowercase, no final dot)


Lookup = Callable[[str, str], Records]  # (name, "A" | "AAAA" | "PTR") -> what DNS says


def dns_lookup(nameservers: tuple[Nameserver, ...], *, timeout: float, lifetime: float) -> Lookup:
    """Lookups asked of these nameservers (address, port), each within `lifetime` seconds."""
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers = [dns.nameserver.Do53Nameserver(address, port) for address, port in nameservers]
    resolver.timeout, resolver.lifetime = timeout, lifetime

    def lookup(name: str, rdtype: str) -> Records:
        try:
            answer = resolver.resolve(name, rdtype, search=False)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return Records(Found.NONE)
        except dns.exception.DNSException:
            return Records(Found.FAILED)
        return Records(Found.RECORDS, tuple(_value(record.to_text(), rdtype) for record in answer))

    return lookup


def _value(text: str, rdtype: str) -> str:
    """An address in its usual form, or a PTR name lowercase without the final dot."""
    return text.rstrip(".").lower() if rdtype == "PTR" else str(ipaddress.ip_address(text))


class IdentityState(StrEnum):
    CONFIRMED = "confirmed"
    MISCONFIGURED = "misconfigured"
    UNCHECKED = "unchecked"


@dataclass(frozen=True, slots=True)
class Identity:
    state: IdentityState
    reason: str  # in words, for the dashboard and /readyz


def identity_checked(helo: str, address: str, lookup: Lookup) -> Identity | None:
    """Whether `helo`'s address records include `address` and `address`'s PTR names `helo`.
    None when DNS could not say (the caller keeps what it found before)."""
    name = helo.rstrip(".").lower()
    ip = ipaddress.ip_address(address)
    forward = lookup(name, "AAAA" if ip.version == 6 else "A")
    reverse = lookup(dns.reversename.from_address(str(ip)).to_text(), "PTR")
    if Found.FAILED in (forward.found, reverse.found):
        return None
    problems = []
    if str(ip) not in forward.values:
        problems.append(f"HELO {name} has no address {ip}")
    if name not in reverse.values:
        problems.append(
            f"{ip}'s PTR names {', '.join(reverse.values)}" if reverse.values else f"{ip} has no PTR record"
        )
    if problems:
        return Identity(IdentityState.MISCONFIGURED, "; ".join(problems))
    return Identity(IdentityState.CONFIRMED, f"HELO {name} has address {ip}, whose PTR names it")


class Listing(StrEnum):
    LISTED = "listed"
    CLEAR = "clear"
    ERROR = "error"  # the zone refused the query, or answered what no DNSBL answers
    UNKNOWN = "unknown"  # DNS did not answer: the caller keeps what it found before


@dataclass(frozen=True, slots=True)
class BlocklistAnswer:
    listing: Listing
    codes: tuple[str, ...] = ()  # the zone's answer, e.g. ("127.0.0.2",)


def blocklist_name(address: str, zone: str) -> str:
    """The name a DNSBL is asked: the address's octets reversed (IPv6: its nibbles) under the zone."""
    origin = dns.name.from_text(zone.rstrip(".") + ".")
    return dns.reversename.from_address(address, v4_origin=origin, v6_origin=origin).to_text(omit_final_dot=True)


def blocklist_checked(address: str, zone: str, lookup: Lookup) -> BlocklistAnswer:
    records = lookup(blocklist_name(address, zone), "A")
    if records.found is Found.FAILED:
        return BlocklistAnswer(Listing.UNKNOWN)
    if records.found is Found.NONE:
        return BlocklistAnswer(Listing.CLEAR)
    codes = tuple(ipaddress.ip_address(code) for code in records.values)
    if any(code in _ZONE_REFUSES or code not in _LISTED for code in codes):
        return BlocklistAnswer(Listing.ERROR, records.values)
    return BlocklistAnswer(Listing.LISTED, records.values)
