"""The engine's MX lookups over c-ares (pycares): the bench's side of the comparison of issue 13.

Not used by the service (verification/engine/dns.py says why); bench/resolvers.py runs it
against ours. Same interface and the same semantics as :class:`~verification.engine.dns.BatchResolver`:
each try is one c-ares query to one nameserver (one channel per nameserver, `tries=1`), and
this module, not c-ares, decides when a try is lost (the pacer's retry timeout), when and where
it is asked again (the next nameserver in turn, within the lookup's lifetime) and how fast
queries go out (pacing.py). c-ares does the wire format, the id and question checks and the
TCP fallback for truncated answers. One channel per `resolve` call, so c-ares's own answer
cache (on by default since 1.31) never outlives a batch.
"""

from __future__ import annotations

import heapq
import selectors
import time
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pycares

from verification.engine import dnswire
from verification.engine.dns import BatchResolver, DomainAnswer, Meanwhile, _failure, _next_turn, _Query

# c-ares statuses that are a nameserver's answer: NXDOMAIN, NOERROR without records.
_ANSWERS = {pycares.errno.ARES_ENOTFOUND: dnswire.NXDOMAIN, pycares.errno.ARES_ENODATA: dnswire.NOERROR}
# A nameserver refusing to answer: ask the next one (as BatchResolver does on these rcodes).
_REFUSALS = {
    pycares.errno.ARES_ESERVFAIL,
    pycares.errno.ARES_EREFUSED,
    pycares.errno.ARES_ENOTIMP,
    pycares.errno.ARES_EFORMERR,
}
_BAD = pycares.ARES_SOCKET_BAD


class CaresResolver(BatchResolver):
    """`BatchResolver` with c-ares underneath: see the module docstring."""

    def batch(self) -> _CaresBatch:  # same run() and close() as the engine's _Batch
        return _CaresBatch(self)


@dataclass(eq=False)
class _Try:
    query: _Query
    sent_at: float
    done: bool = False


@dataclass(eq=False)
class _CaresBatch:
    resolver: CaresResolver
    selector: selectors.DefaultSelector = field(default_factory=selectors.DefaultSelector)
    channels: list[pycares.Channel] = field(default_factory=list)
    inflight: set[_Try] = field(default_factory=set)
    timers: list[tuple[float, int, _Try]] = field(default_factory=list)
    answers: dict[str, DomainAnswer] = field(default_factory=dict)
    retries: deque[_Query] = field(default_factory=deque)
    sent: int = 0
    closed: bool = False

    def __post_init__(self) -> None:
        for address, port in self.resolver.nameservers:
            host = f"[{address}]" if ":" in address else address
            channel = pycares.Channel(
                timeout=self.resolver.config.timeout,
                tries=1,
                servers=[f"{host}:{port}"],
                socket_receive_buffer_size=1 << 20,
                sock_state_cb=partial(self.socket_state, len(self.channels)),
            )
            self.channels.append(channel)

    def socket_state(self, channel: int, fd: int, readable: bool, writable: bool) -> None:
        """c-ares opened, closed or wants to write on a socket: watch it accordingly."""
        if self.closed:  # the channel is being destroyed, on pycares's shutdown thread
            return
        events = (selectors.EVENT_READ if readable else 0) | (selectors.EVENT_WRITE if writable else 0)
        registered = fd in self.selector.get_map()
        if not events:
            if registered:
                self.selector.unregister(fd)
        elif registered:
            self.selector.modify(fd, events, self.channels[channel])
        else:
            self.selector.register(fd, events, self.channels[channel])

    def run(self, domains: list[str], meanwhile: Meanwhile | None = None) -> dict[str, DomainAnswer]:
        del meanwhile  # the caller's work is done after the lookup, not during its waits
        waiting = deque(domains)
        config, pacer = self.resolver.config, self.resolver.pacer
        while waiting or self.retries or self.inflight:
            now = time.monotonic()
            paced = 0.0
            while (self.retries or waiting) and len(self.inflight) < config.concurrency:
                if not pacer.may_send(now):
                    paced = max(pacer.next_token_in(), 1e-4)
                    break
                self.send(self.retries.popleft() if self.retries else _Query(waiting.popleft(), now + config.lifetime))
            wait = max(0.0, self.timers[0][0] - time.monotonic()) if self.timers else None
            if paced:
                wait = min(wait if wait is not None else paced, paced)
            self.process(self.selector.select(wait))
            self.expire()
        return self.answers

    def process(self, events: list[tuple[selectors.SelectorKey, int]]) -> None:
        for key, mask in events:
            read, write = mask & selectors.EVENT_READ, mask & selectors.EVENT_WRITE
            key.data.process_fd(key.fd if read else _BAD, key.fd if write else _BAD)
        if not events:  # c-ares's own timers
            for each in self.channels:
                each.process_fd(_BAD, _BAD)

    def send(self, query: _Query) -> None:
        now = time.monotonic()
        server = _next_turn(query, len(self.channels), self.answers, now)
        if server is None:
            return
        self.sent += 1
        attempt = _Try(query, now)
        self.inflight.add(attempt)
        heapq.heappush(self.timers, (min(now + self.resolver.pacer.rto(), query.deadline), self.sent, attempt))
        try:
            self.channels[server].query(query.domain, pycares.QUERY_TYPE_MX, callback=partial(self.done, attempt))
        except (pycares.AresError, ValueError, UnicodeError):
            attempt.done = True
            self.inflight.discard(attempt)
            self.answers[query.domain] = _failure(query.domain)

    def done(self, attempt: _Try, result: Any, error: int | None) -> None:
        """c-ares ended a try. Answers and refusals count; anything else (its own timeout, an
        ICMP error) is left to the try's timer, as BatchResolver leaves it."""
        if attempt.done or self.closed or (error is not None and error not in _ANSWERS and error not in _REFUSALS):
            return
        attempt.done = True
        self.inflight.discard(attempt)
        now = time.monotonic()
        self.resolver.pacer.on_answer(now, now - attempt.sent_at)
        query = attempt.query
        if error in _REFUSALS:
            query.refused_by += 1
            self.send(query)
            return
        rcode = dnswire.NOERROR if error is None else _ANSWERS[error]
        reply = dnswire.Reply(0, rcode, False, query.domain.lower(), _mx_records(query.domain, result))
        self.answers[query.domain] = self.resolver.answer(query.domain, reply)

    def expire(self) -> None:
        now = time.monotonic()
        while self.timers and self.timers[0][0] <= now:
            _, _, attempt = heapq.heappop(self.timers)
            if attempt.done:
                continue
            attempt.done = True
            self.inflight.discard(attempt)
            self.resolver.pacer.on_loss(now, attempt.sent_at)
            if now >= attempt.query.deadline:
                self.answers[attempt.query.domain] = _failure(attempt.query.domain)
            else:
                self.retries.append(attempt.query)

    def close(self) -> None:
        self.closed = True
        for channel in self.channels:
            channel.close()
        self.selector.close()


def _mx_records(domain: str, result: Any) -> tuple[tuple[int, str, int], ...]:
    """(preference, exchange, ttl) of the MX records of the name a CNAME chain ends at."""
    if result is None:
        return ()
    cnames = {r.name.lower(): r.data.cname.lower() for r in result.answer if r.type == pycares.QUERY_TYPE_CNAME}
    target = dnswire._follow(domain.lower(), cnames)
    return tuple(
        (r.data.priority, r.data.exchange.lower().rstrip("."), r.ttl)
        for r in result.answer
        if r.type == pycares.QUERY_TYPE_MX and r.name.lower().rstrip(".") == target
    )
