"""MX lookups for many domains at once.

Each domain ends in one :class:`DomainAnswer`. Definitive answers (MX found,
no MX, null MX, NXDOMAIN) carry a TTL and may be cached; failures (timeout,
SERVFAIL, no nameserver answering) are never cached.

A bulk chunk asks about thousands of domains at once. dnspython's resolver spends about
0.45 ms of CPU on each query (a socket, an event-loop endpoint and a message object apiece:
README, "Performance"), which made DNS the cost of a bulk job; :class:`BatchResolver` keeps
up to `concurrency` queries in flight over a few UDP sockets from one thread and, with the
decoder of dnswire.py, spends about 0.03 ms. dnspython still reads the system's resolver
configuration.

c-ares behind this same interface was measured and costs more (bench/README.md, "Ours against
c-ares"): the resolver stays ours. Worth measuring again if c-ares or pycares gets cheaper per
query, or if this module needs more of the protocol than MX.
"""

from __future__ import annotations

import functools
import heapq
import math
import selectors
import socket
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

import dns.resolver

from verification.engine import dnswire, frozen
from verification.engine.dns_udp import DnsSockets, Key, Nameserver
from verification.engine.pacing import Pacer

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
    lifetime: float = 9.0  # three tries' worth
    concurrency: int = 256
    max_qps: float | None = None  # a ceiling on the paced sending rate
    ttl_bounds: tuple[int, int] = field(default=(60, 6 * 3600))


class DomainCache(Protocol):
    def get_many(self, domains: Collection[str]) -> dict[str, DomainAnswer]: ...

    def put_many(self, answers: Iterable[DomainAnswer]) -> None: ...


def parse_nameserver(spec: str) -> Nameserver:
    """`host`, `host:port`, `v6` or `[v6]:port` as (address, port)."""
    host, port = spec, 53
    if spec.startswith("["):  # [::1]:5353
        host, _, rest = spec[1:].partition("]")
        port = int(rest.lstrip(":") or 53)
    elif spec.count(":") == 1:
        host, raw_port = spec.split(":")
        port = int(raw_port)
    return host, port


@functools.cache
def system_nameservers() -> tuple[Nameserver, ...]:
    """The machine's resolvers (/etc/resolv.conf and the like), read by dnspython once."""
    resolver = dns.resolver.Resolver(configure=True)
    return tuple((str(address), resolver.port) for address in resolver.nameservers)


# Work done while a batch waits on DNS: given the answers as they come (a list that grows, in order
# of arrival), an iterator whose every step is a short slice of it and says whether it did any
# (False: nothing to do until more answers come). An MX answer is final as it comes: only negative
# answers may yet be withheld (verification/resolver.py), only failures asked again (core.py).
Meanwhile = Callable[[Sequence[DomainAnswer]], Iterator[bool]]
# The same for a lookup, which is also given the answers it knew before asking (the cache's).
LookupMeanwhile = Callable[[Mapping[str, DomainAnswer], Sequence[DomainAnswer]], Iterator[bool]]


def lookup_domains(
    domains: Collection[str], *, cache: DomainCache, resolver: BatchResolver, meanwhile: LookupMeanwhile | None = None
) -> dict[str, DomainAnswer]:
    """Answers for every domain: from the cache where fresh, else from DNS (then cached). While DNS
    is awaited, `meanwhile`'s work on the cached answers is done a step at a time."""
    found = cache.get_many(domains) if domains else {}
    missing = [d for d in domains if d not in found]
    if missing:
        fresh = resolver.resolve(missing, meanwhile=functools.partial(meanwhile, found) if meanwhile else None)
        cache.put_many(answer for answer in fresh.values() if answer.cacheable)
        found.update(fresh)
    return found


@dataclass(eq=False, slots=True)
class _Query:
    domain: str
    deadline: float  # the lookup's lifetime ends here
    tries: int = 0
    sent_at: float = 0.0  # the latest try's
    refused_by: int = 0  # nameservers that answered SERVFAIL, REFUSED and the like


_Timer = tuple[float, int, list[tuple[Key, _Query]]]  # (when, its order, the tries whose wait ends then)
# A try's wait ends at the end of its millisecond (a thousandth of a second late at most), so that
# the tries sent within one millisecond share a timer.
_TIMER_TICKS = 1000  # a second's


class BatchResolver:
    """Resolves many domains' MX records at once over UDP, falling back to TCP when truncated.

    Each try waits for an answer up to the retry timeout the answers so far suggest (at most
    `timeout` seconds), then the query is asked again, of the next nameserver in turn (the
    same one when there is one), until `lifetime` seconds have passed since the domain's first
    try; SERVFAIL and other refusals also move on to the next nameserver. Queries are paced
    (pacing.py): a resolver that drops what it cannot answer is asked more slowly. Sockets are
    connected, so the kernel drops datagrams from anyone but the nameserver, and an
    answer counts only if its id and question match a query in flight.
    """

    SOCKETS_PER_NAMESERVER = 8

    def __init__(self, config: ResolverConfig) -> None:
        self.config = config
        specs = config.nameservers
        self.nameservers = tuple(parse_nameserver(s) for s in specs) if specs else system_nameservers()
        now = time.monotonic()
        self.pacer = Pacer(config.timeout, config.max_qps, refilled=now, period_start=now)

    def resolve(self, domains: Iterable[str], *, meanwhile: Meanwhile | None = None) -> dict[str, DomainAnswer]:
        """Every domain's answer, in the order the answers arrived (the trusted resolver's canaries
        vouch only for answers before theirs); a failure counts as arriving when it was given up.
        Whenever it would wait for an answer, it takes a step of `meanwhile`'s work instead, if any is left."""
        batch = self.batch()
        try:
            return batch.run(list(dict.fromkeys(domains)), meanwhile)
        finally:
            batch.close()

    def batch(self) -> _Batch:
        """One `resolve` call's queries in flight (bench/cares_resolver.py puts c-ares's in their place)."""
        return _Batch(self)

    def resolve_tcp(self, domain: str, nameserver: Nameserver) -> dnswire.Reply | None:
        """One query over TCP (RFC 7766), for an answer too large for UDP; None if it fails."""
        query = dnswire.encode_query(dnswire.query_id(), domain)
        try:
            with socket.create_connection(nameserver, timeout=self.config.timeout) as conn:
                conn.sendall(dnswire.tcp_frame(query))
                reply = dnswire.decode_reply(dnswire.read_tcp_message(conn))
        except (OSError, dnswire.WireError):
            return None
        return reply if reply.question == domain.lower() else None

    def answer(self, domain: str, reply: dnswire.Reply) -> DomainAnswer:
        low, high = self.config.ttl_bounds
        if reply.rcode == dnswire.NXDOMAIN:
            return _answer(domain, DomainStatus.NXDOMAIN, _clamp(_negative(reply), low, high), ())
        if not reply.mx:
            return _answer(domain, DomainStatus.NO_MX, _clamp(_negative(reply), low, high), ())
        # Lists, not generators: this runs once a domain, tens of thousands of times a job.
        records = reply.mx
        ttl = _clamp(min([ttl for _, _, ttl in records]), low, high)
        hosts: tuple[str, ...]
        if len(records) == 1:  # most domains have one or two
            hosts = (records[0][1],) if records[0][1] else ()
        elif len(records) == 2 and records[0][1] and records[1][1]:
            hosts = (records[0][1], records[1][1]) if records[0] <= records[1] else (records[1][1], records[0][1])
        else:
            hosts = tuple([host for _, host in sorted([(pref, host) for pref, host, _ in records if host])])
        return _answer(domain, DomainStatus.MX if hosts else DomainStatus.NULL_MX, ttl, hosts)


class _Batch:
    """One `resolve` call: its sockets, the queries in flight and their timers."""

    def __init__(self, resolver: BatchResolver) -> None:
        self.resolver = resolver
        self.config = resolver.config
        self.selector = selector = selectors.DefaultSelector()
        # The callbacks hold the selector, not the batch: a batch they held would be kept, with
        # every query it made, by the cycle through its sockets until the cyclic garbage collector
        # next walked it (a 100,000-row job's 20,000 queries a round).
        self.udp = DnsSockets[_Query](
            resolver.nameservers,
            resolver.SOCKETS_PER_NAMESERVER,
            watch=lambda sock, server, slot: selector.register(sock, selectors.EVENT_READ, (sock, server, slot)),
            unwatch=selector.unregister,
        )
        # When each try's wait ends: one timer for the tries whose waits end in the same millisecond
        # (a window's new queries, sent within one or two), rather than one each: a heap push a
        # query was 4% of the engine's time.
        self.timers: list[_Timer] = []
        self.latest_timer: _Timer | None = None
        self.answers: dict[str, DomainAnswer] = {}
        self.arrived: list[DomainAnswer] = []  # the answers over UDP, as they came
        self.truncated: list[tuple[str, int]] = []
        self.sent = 0
        self.retries: deque[_Query] = deque()  # timed out, to be asked again
        self.pacer = resolver.pacer

    def run(self, domains: list[str], meanwhile: Meanwhile | None = None) -> dict[str, DomainAnswer]:
        waiting = deque(domains)
        work = meanwhile(self.arrived) if meanwhile else None
        while waiting or self.retries or self.udp.inflight:
            paced = self.send_paced(waiting)
            wait = max(0.0, self.timers[0][0] - time.monotonic()) if self.timers else None
            if paced:
                wait = min(wait if wait is not None else paced, paced)
            # Rather than wait, a step of the caller's work, then a look at what came meanwhile: the
            # last answers of a batch come a round trip after its last query, idle time a chunk.
            if work is not None and wait != 0.0:
                did = next(work, None)
                if did is None:
                    work = None
                elif did:
                    wait = 0.0
            if wait is None:  # no timer and no pace to wake us: nothing left could ever be answered
                self.give_up(waiting)
                break
            for key, _ in self.selector.select(wait):
                self.drain(*key.data)
            self.expire()
        for domain, nameserver in self.truncated:
            reply = self.resolver.resolve_tcp(domain, self.resolver.nameservers[nameserver])
            self.answers[domain] = self.resolver.answer(domain, reply) if reply else _failure(domain)
        return self.answers

    def send_paced(self, waiting: deque[str]) -> float:
        """Send retries, then new queries, as the window and the pace allow. Returns how long
        until the pace allows the next one, or 0 when nothing is held back by it."""
        now = time.monotonic()
        retries, inflight, window = self.retries, self.udp.inflight, self.config.concurrency
        rto = self.pacer.rto()  # no answer is read while these go out
        while (retries or waiting) and len(inflight) < window:
            granted = self.pacer.take(now, min(window - len(inflight), len(retries) + len(waiting)))
            if not granted:
                return max(self.pacer.next_token_in(), 1e-4)
            for _ in range(granted):
                query = retries.popleft() if retries else _Query(waiting.popleft(), now + self.config.lifetime)
                self.send(query, rto)
        return 0.0

    def send(self, query: _Query, rto: float | None = None) -> None:
        """Send a try to the next nameserver in turn, or fail the query if its time is up."""
        now = time.monotonic()
        server = _next_turn(query, len(self.resolver.nameservers), self.answers, now)
        if server is None:
            return
        self.sent += 1
        try:
            key = self.udp.send(server, query.domain, query)
        except (OSError, dnswire.WireError):
            self.answers[query.domain] = _failure(query.domain)
            return
        query.sent_at = now
        timeout = self.pacer.rto() if rto is None else rto
        due = math.ceil(min(now + timeout, query.deadline) * _TIMER_TICKS) / _TIMER_TICKS
        latest = self.latest_timer
        if latest is not None and latest[0] == due:
            latest[2].append((key, query))
        else:
            self.latest_timer = latest = (due, self.sent, [(key, query)])
            heapq.heappush(self.timers, latest)

    def drain(self, sock: socket.socket, server: int, slot: int) -> None:
        """Take every answer waiting on the socket."""
        inflight = self.udp.inflight
        now, sent_at = time.monotonic(), None  # what waits on the socket came before now
        for key, query, reply in self.udp.answers(sock, server, slot):
            del inflight[key]
            if sent_at is None:
                sent_at = query.sent_at
            self.receive(query, server, reply)
        if sent_at is not None:  # one round trip measured a read, not one an answer (RFC 6298, 3)
            self.pacer.on_answer(now, now - sent_at)

    def receive(self, query: _Query, server: int, reply: dnswire.Reply) -> None:
        if reply.rcode not in (dnswire.NOERROR, dnswire.NXDOMAIN):
            query.refused_by += 1
            self.send(query)
        elif reply.truncated and not reply.mx and reply.rcode == dnswire.NOERROR:
            self.truncated.append((query.domain, server))
        else:
            self.answers[query.domain] = answer = self.resolver.answer(query.domain, reply)
            self.arrived.append(answer)

    def expire(self) -> None:
        now = time.monotonic()
        while self.timers and self.timers[0][0] <= now:
            timer = heapq.heappop(self.timers)
            if timer is self.latest_timer:
                self.latest_timer = None
            for key, query in timer[2]:
                asked = self.udp.inflight.get(key)
                if asked is not None and asked[1] is query:  # no answer in time: ask again (or give up)
                    self.udp.forget(key)
                    self.pacer.on_loss(now, query.sent_at)
                    if now >= query.deadline:
                        self.answers[query.domain] = _failure(query.domain)
                    else:
                        self.retries.append(query)

    def give_up(self, waiting: deque[str]) -> None:
        """Fail every domain still open. Seen once, under a heavily loaded full test run: a batch
        blocked in select() with no timer left (cause not found); a lookup must end, not hang."""
        open_queries = [*waiting, *(q.domain for q in self.retries), *(q.domain for _, q in self.udp.inflight.values())]
        for domain in open_queries:
            self.answers.setdefault(domain, _failure(domain))
        waiting.clear()
        self.retries.clear()
        self.udp.inflight.clear()

    def close(self) -> None:
        self.udp.close()
        self.selector.close()


def _next_turn(query: _Query, nameservers: int, answers: dict[str, DomainAnswer], now: float) -> int | None:
    """The nameserver that takes the query's next try, in turn; None, with the query failed in
    `answers`, once its time is up or every nameserver has refused it."""
    if now >= query.deadline or query.refused_by >= nameservers:
        answers[query.domain] = _failure(query.domain)
        return None
    query.tries += 1
    return (query.tries - 1) % nameservers


def _failure(domain: str) -> DomainAnswer:
    return DomainAnswer(domain, DomainStatus.FAILURE)


_answer = frozen.builder(DomainAnswer)


def _negative(reply: dnswire.Reply) -> int:
    """RFC 2308: a negative answer lives for min(SOA TTL, SOA MINIMUM)."""
    return _DEFAULT_NEGATIVE_TTL if reply.negative_ttl is None else reply.negative_ttl


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))
