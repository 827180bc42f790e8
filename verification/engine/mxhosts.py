"""An MX host's addresses (A, then AAAA), asked of the configured nameservers, never of the
system's name lookup (getaddrinfo): a host name read from DNS is resolved by DNS alone.

The queries are plain datagrams on the event loop, encoded and decoded by dnswire.py: a
deep batch asks for thousands of hosts' addresses, and dnspython's resolver spent more CPU on
them (~0.45 ms a query) than the batch's SMTP sessions did; so did a socket and a listening task
of its own for each query (about a third of a 20,000-row batch's event loop, profiled). The
lookups of one batch share a few connected sockets per nameserver, read by one callback each, as
the domain lookups' BatchResolver (dns.py) does: the kernel drops datagrams from anyone but the
nameserver, and an answer counts only with the id of a query in flight on that socket and the
question asked. The sockets are closed whenever no lookup is in flight.

A host's addresses are remembered by the process for their records' TTL, at most
REMEMBER_SECONDS (300), per set of nameservers: a large deep job's hosts are asked when it is
ordered by MX address (jobs/grouping.py) and again by each of its batches, which the same worker
usually runs next; 16,000 queries of a 40,000-row job's 14 s. Only an answer that names an
address, each of its A and AAAA lookups answered, is remembered: never a lookup that timed out or
a host with no address, which the next batch asks again.

A host lookup may take up to HOST_LOOKUP_SECONDS, asked again every `timeout` meanwhile (each
nameserver in turn), however short the domain lookups' lifetime (VERIFIER_DNS_LIFETIME, tuned for
a bulk chunk's thousands of domains): an MX host whose A answer comes late is not the same as one
with no address, and taking it for one would hand its recipients to a backup host (or answer them
smtp_unreachable) for a lost UDP packet. A lookup runs once per host and batch, beside sessions
that take seconds. An answer that is not NOERROR, or names no address, gives none of that type.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import socket
import time

from verification.engine import dnswire
from verification.engine.dns import ResolverConfig, parse_nameserver, system_nameservers
from verification.engine.dns_udp import DnsSockets, Nameserver
from verification.engine.smtp_scheduling import HostResolver

# The least time a host lookup may take (retries included), whatever VERIFIER_DNS_LIFETIME says.
HOST_LOOKUP_SECONDS = 3.0
# How long, at most, a host's addresses are remembered (less when their TTL says so), and for how
# many hosts: past that many, the process starts again from none.
REMEMBER_SECONDS = 300
REMEMBER_MOST = 100_000
_remembered: dict[tuple[tuple[Nameserver, ...], str], tuple[float, tuple[str, ...]]] = {}


def forget() -> None:
    """Forget every host's addresses (tests whose DNS server's zone changes between them)."""
    _remembered.clear()


def _recall(servers: tuple[Nameserver, ...], host: str) -> tuple[str, ...] | None:
    found = _remembered.get((servers, host))
    if found is None or found[0] <= time.monotonic():
        return None
    return found[1]


def _remember(servers: tuple[Nameserver, ...], host: str, addresses: tuple[str, ...], ttl: int) -> None:
    if len(_remembered) >= REMEMBER_MOST:
        _remembered.clear()
    _remembered[servers, host] = (time.monotonic() + min(ttl, REMEMBER_SECONDS), addresses)


def host_resolver(config: ResolverConfig) -> HostResolver:
    """A cached lookup of MX hosts' addresses for one batch of sessions."""
    specs = config.nameservers
    servers = [parse_nameserver(spec) for spec in specs] if specs else list(system_nameservers())
    return _HostLookups(servers, config.timeout, max(config.lifetime, HOST_LOOKUP_SECONDS), config.concurrency)


class _HostLookups:
    """One batch's host lookups (module docstring): each host asked once, A and AAAA at once."""

    SOCKETS_PER_NAMESERVER = 8

    def __init__(self, servers: list[Nameserver], timeout: float, lifetime: float, concurrency: int) -> None:
        self.servers, self.timeout, self.lifetime = servers, timeout, lifetime
        self.key = tuple(servers)  # whose answers this batch recalls and remembers
        # At most VERIFIER_DNS_CONCURRENCY queries in flight, as the domain lookups: a 20,000-row
        # batch's 8,000 host queries sent at once overflowed the nameserver's queue, and each lost
        # one waited out a timeout (3 s) before it was asked again.
        self.in_flight = asyncio.Semaphore(concurrency)
        self.found: dict[str, asyncio.Task[list[str]]] = {}
        self.udp = DnsSockets[asyncio.Queue[dnswire.Reply]](
            servers,
            self.SOCKETS_PER_NAMESERVER,
            watch=lambda sock, server, slot: asyncio.get_running_loop().add_reader(
                sock, self._drain, sock, server, slot
            ),
            unwatch=lambda sock: asyncio.get_running_loop().remove_reader(sock),
        )
        self.running = 0  # lookups under way: the sockets are closed when none is

    async def __call__(self, host: str) -> list[str]:
        if host not in self.found:
            remembered = _recall(self.key, host)
            if remembered is not None:
                return list(remembered)
            self.found[host] = asyncio.ensure_future(self._addresses(host))
        return await self.found[host]

    async def _addresses(self, host: str) -> list[str]:
        try:
            return [str(ipaddress.ip_address(host))]  # an MX naming an address literal
        except ValueError:
            pass
        answers = await asyncio.gather(*(self._lookup(host, rdtype) for rdtype in (dnswire.A, dnswire.AAAA)))
        addresses = [address for answer in answers if answer is not None for address in answer.addresses]
        ttls = [answer.address_ttl for answer in answers if answer is not None and answer.address_ttl is not None]
        if addresses and all(answer is not None for answer in answers) and min(ttls) > 0:  # module docstring
            _remember(self.key, host, tuple(addresses), min(ttls))
        return addresses

    async def _lookup(self, host: str, rdtype: int) -> dnswire.Reply | None:
        self.running += 1  # from the moment it waits for its turn: sockets stay open while any lookup waits
        try:
            async with self.in_flight:
                return await self._asked(host, rdtype)
        finally:
            self.running -= 1
            if not self.running:
                self._close()

    async def _asked(self, host: str, rdtype: int) -> dnswire.Reply | None:
        """The host's addresses of one type. The query goes to each nameserver in turn, again every
        `timeout`, for `lifetime` in all; an answer to an earlier try that comes late still counts
        (a loaded nameserver is slow on every try alike)."""
        name = host.rstrip(".").lower()
        answers: asyncio.Queue[dnswire.Reply] = asyncio.Queue()
        keys: list[tuple[int, int, int]] = []
        deadline = time.monotonic() + self.lifetime
        try:
            for turn in itertools.count():
                left = deadline - time.monotonic()
                if left <= 0 or not self.servers:
                    break
                try:
                    keys.append(self.udp.send(turn % len(self.servers), name, answers, rdtype))
                except dnswire.WireError:  # not a name a query can carry
                    return None
                except OSError:
                    pass  # the nameserver is unreachable from here: the next try goes to the next one
                with contextlib.suppress(TimeoutError):
                    reply = await asyncio.wait_for(answers.get(), min(self.timeout, left))
                    if reply.rcode in (dnswire.NOERROR, dnswire.NXDOMAIN):
                        return reply
                    # SERVFAIL, REFUSED: that nameserver cannot say; the next one is asked at once
        finally:
            for key in keys:
                self.udp.forget(key)
        return None  # nobody answered within the lifetime

    def _drain(self, sock: socket.socket, server: int, slot: int) -> None:
        """Every answer waiting on the socket goes to its query (a late answer to an earlier try counts)."""
        for _, answers, reply in self.udp.answers(sock, server, slot):
            answers.put_nowait(reply)

    def _close(self) -> None:
        self.udp.close()
