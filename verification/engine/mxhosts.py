"""An MX host's addresses (A, then AAAA), asked of the configured nameservers, never of the
system's name lookup (getaddrinfo): a host name read from DNS is resolved by DNS alone.

The queries are plain datagrams on the event loop, encoded and decoded by dnswire.py: a
deep batch asks for thousands of hosts' addresses, and dnspython's resolver spent more CPU on
them (~0.45 ms a query) than the batch's SMTP sessions did; so did a socket and a listening task
of its own for each query (about a third of a 20,000-row batch's event loop, profiled). The
lookups of one batch share a few connected sockets per nameserver, read by one callback each, as
the domain lookups' BatchResolver (dns.py) does: the kernel drops datagrams from anyone but the
nameserver, and an answer counts only with the id of a query in flight on that socket and the
question asked. The sockets are closed whenever no lookup is in flight. Nor is a query a task, a
queue and a wait_for of its own: a host's lookup is one future, its queries are answered from the
sockets' readers and asked again from one timer (0.44 -> 0.22 s of CPU for a 20,000-row batch's
4,000 hosts, and of wall time before its first session).

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
import heapq
import ipaddress
import socket
import time
from collections import deque
from dataclasses import dataclass, field

from verification.engine import dnswire
from verification.engine.dns import ResolverConfig, parse_nameserver, system_nameservers
from verification.engine.dns_udp import DnsSockets, Key, Nameserver
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
    """One batch's host lookups (module docstring): each host asked once, A and AAAA at once, its two
    queries waiting in one line for a place in the window, retried from one timer (the earliest due)."""

    SOCKETS_PER_NAMESERVER = 8

    def __init__(self, servers: list[Nameserver], timeout: float, lifetime: float, concurrency: int) -> None:
        self.servers, self.timeout, self.lifetime = servers, timeout, lifetime
        self.key = tuple(servers)  # whose answers this batch recalls and remembers
        # At most VERIFIER_DNS_CONCURRENCY queries in flight, as the domain lookups: a 20,000-row
        # batch's 8,000 host queries sent at once overflowed the nameserver's queue, and each lost
        # one waited out a timeout (3 s) before it was asked again.
        self.concurrency = concurrency
        self.found: dict[str, asyncio.Future[list[str]]] = {}
        self.udp = DnsSockets[_Query](
            servers,
            self.SOCKETS_PER_NAMESERVER,
            watch=lambda sock, server, slot: asyncio.get_running_loop().add_reader(
                sock, self._drain, sock, server, slot
            ),
            unwatch=lambda sock: asyncio.get_running_loop().remove_reader(sock),
        )
        self.waiting: deque[_Query] = deque()  # not sent yet: the window is full
        self.active = 0  # queries sent and not done
        self.pending = 0  # queries not done, sent or waiting
        self.filling = False
        self.due: list[tuple[float, int, _Query, int]] = []  # (when, order, query, its try): a heap
        self.timer: asyncio.TimerHandle | None = None
        self.order = 0

    async def __call__(self, host: str) -> list[str]:
        if host not in self.found:
            remembered = _recall(self.key, host)
            if remembered is not None:
                return list(remembered)
            self.found[host] = self._lookup(host)
        return list(await self.found[host])

    def _lookup(self, host: str) -> asyncio.Future[list[str]]:
        """The future of the host's addresses; its A and AAAA queries join the line."""
        future: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        try:
            future.set_result([str(ipaddress.ip_address(host))])  # an MX naming an address literal
            return future
        except ValueError:
            pass
        both = _Host(host, future)
        name = host.rstrip(".").lower()
        both.queries = [_Query(both, name, rdtype) for rdtype in (dnswire.A, dnswire.AAAA)]
        self.waiting.extend(both.queries)
        self.pending += 2
        future.add_done_callback(lambda _: self._abandon(both) if future.cancelled() else None)
        self._fill()
        return future

    def _fill(self) -> None:
        """Queries from the line into the window. Its lifetime starts there: a query waiting for its
        turn behind thousands is not late. Not again from within (a query done at its first try)."""
        if self.filling:
            return
        self.filling = True
        try:
            while self.waiting and self.active < self.concurrency:
                query = self.waiting.popleft()
                if not query.done:  # not abandoned while it waited
                    query.in_window, query.deadline = True, time.monotonic() + self.lifetime
                    self.active += 1
                    self._try(query)
        finally:
            self.filling = False

    def _abandon(self, host: _Host) -> None:
        """A lookup cancelled (Prober.ask's deadline cancels every lookup under way): its queries end,
        unanswered, and the sockets close once nothing else is under way."""
        for query in host.queries:
            if not query.done:
                self._end(query)
        self._after_end()

    def _try(self, query: _Query) -> None:
        """The query's next try, to the next nameserver in turn (the first try: the first), answered
        or not within `timeout` (less what is left of its lifetime); nothing when it is over."""
        now = time.monotonic()
        left = query.deadline - now
        if left <= 0 or not self.servers:
            self._done(query, None)
            return
        query.turn += 1
        try:
            query.keys.append(self.udp.send((query.turn - 1) % len(self.servers), query.name, query, query.rdtype))
        except dnswire.WireError:  # not a name a query can carry
            self._done(query, None)
            return
        except OSError:
            pass  # the nameserver is unreachable from here: the next try goes to the next one
        self.order += 1
        heapq.heappush(self.due, (now + min(self.timeout, left), self.order, query, query.turn))
        if self.timer is None or self.due[0][0] < self.timer.when():
            self._wake_at(self.due[0][0])

    def _wake_at(self, when: float) -> None:
        if self.timer is not None:
            self.timer.cancel()
        loop = asyncio.get_running_loop()
        self.timer = loop.call_at(loop.time() + max(0.0, when - time.monotonic()), self._expire)

    def _expire(self) -> None:
        """Each query whose try went unanswered for its time is tried again (or done)."""
        self.timer = None
        now = time.monotonic()
        while self.due and self.due[0][0] <= now:
            _, _, query, turn = heapq.heappop(self.due)
            if not query.done and query.turn == turn:
                self._try(query)
        if self.due and self.timer is None:
            self._wake_at(self.due[0][0])

    def _drain(self, sock: socket.socket, server: int, slot: int) -> None:
        """Every answer waiting on the socket goes to its query (a late answer to an earlier try counts):
        NOERROR and NXDOMAIN end it; SERVFAIL, REFUSED: that nameserver cannot say, the next is asked at once."""
        # read whole first: the last answer may close the sockets (_done), which the reading would spin on
        for _, query, reply in list(self.udp.answers(sock, server, slot)):
            if query.done:
                continue
            if reply.rcode in (dnswire.NOERROR, dnswire.NXDOMAIN):
                self._done(query, reply)
            else:
                self._try(query)

    def _done(self, query: _Query, reply: dnswire.Reply | None) -> None:
        self._end(query)
        host = query.host
        host.replies.append(reply)
        if len(host.replies) == 2:
            host.future.set_result(self._addresses(host.name, host.replies))
        self._after_end()

    def _end(self, query: _Query) -> None:
        query.done = True
        for key in query.keys:
            self.udp.forget(key)
        self.pending -= 1
        if query.in_window:  # its place there is free
            self.active -= 1

    def _after_end(self) -> None:
        self._fill()
        if not self.pending:
            self._close()

    def _addresses(self, host: str, answers: list[dnswire.Reply | None]) -> list[str]:
        addresses = [address for answer in answers if answer is not None for address in answer.addresses]
        ttls = [answer.address_ttl for answer in answers if answer is not None and answer.address_ttl is not None]
        if addresses and all(answer is not None for answer in answers) and min(ttls) > 0:  # module docstring
            _remember(self.key, host, tuple(addresses), min(ttls))
        return addresses

    def _close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.due.clear()
        self.waiting.clear()  # only abandoned ones are left
        self.udp.close()


@dataclass(slots=True, eq=False)
class _Host:
    """A host's lookup: its A and AAAA replies (None: unanswered) as they come."""

    name: str
    future: asyncio.Future[list[str]]
    replies: list[dnswire.Reply | None] = field(default_factory=list)
    queries: list[_Query] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class _Query:
    """One of a host's two queries: its tries so far, their keys on the sockets, whether it is done."""

    host: _Host
    name: str
    rdtype: int
    deadline: float = 0.0  # set when it enters the window
    in_window: bool = False
    turn: int = 0
    keys: list[Key] = field(default_factory=list)
    done: bool = False
