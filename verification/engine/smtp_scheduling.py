"""The scheduling of deep verification's SMTP sessions: which MX address to ask about which
mailboxes, through which egress, and when (politeness and grouping; the dialogue itself is
smtp.py, what the replies mean smtp_replies.py).

Recipients are grouped by their domains' MX addresses (domains naming the same hosts, as every
domain one provider hosts does, or hosts that resolve to the same addresses, share a group): each
group's recipients (the addresses, then the
catch-all probes) go to its MX hosts in preference order, dealt from the start among as many
sessions at once as politeness allows (`per_host`), each of at least RECIPIENTS_A_SESSION (a
session costs four replies besides its RCPTs: banner, EHLO, MAIL FROM, QUIT): a
host that refuses, stays silent or answers 4xx at connect passes the turn to the next. Groups run
concurrently on one event loop; what bounds them is politeness:

At most `per_host` sessions at once from this machine to one MX address, whatever the number of
processes. Each session holds one of `per_host` lock files for its address (`fcntl.flock`,
non-blocking): a lock is per machine by nature (the lock directory is local), the kernel drops it
when its process dies however it dies (no lease to expire or tune, nothing to clean up after
kill -9), and it costs no database or Redis round trip. One machine's limit is all we promise
(docs/deep.md): a second machine has its own IP address, which the MX counts apart.

With egresses (egress.py), the count is per egress and address: what an MX counts is the sending
address. Where machines share an egress, RedisLeases (leases.py) count across them instead.
A session refused for the egress's own reputation is asked again through the next egress before
any recipient is judged; with no egress to use (all resting) every recipient answers RESTING.

A 421 or "too many connections" is no verdict: the group backs off and asks again while its
deadline allows. A recipient refused as one too many is asked again in a session of its own.

Bounded work (docs/deep.md, "Bounded work"): a group tries at most MAX_MX_HOSTS of its MX hosts,
in preference order (RFC 5321 section 5.1 lets a client cap them), at most MAX_MX_ADDRESSES
addresses among them, and each address once a round; whatever a hostile MX record set names
beyond that is never looked up or contacted, only counted (`Findings.cut`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import hmac
import ipaddress
import os
import random
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Protocol

from verification.engine.egress import DIRECT, Egress, is_reputation_refusal
from verification.engine.smtp import Session, SmtpConfig, run_session
from verification.engine.smtp_replies import Meaning, Reply, meaning

HostResolver = Callable[[str], Awaitable[list[str]]]  # MX host name -> its addresses
AddressCheck = Callable[[str], bool]  # may this address be contacted?

# A 421 backs a group off about this long (jittered), doubling each time, while its deadline allows.
_BACKOFF_SECONDS = 0.5
_BACKOFF_TRIES = 5
_SLOT_POLL_SECONDS = 0.02
# A group is dealt among up to `per_host` sessions run at once, each with at least this many recipients
# (twice a session's four replies of overhead: a smaller share would cost more than it saves).
RECIPIENTS_A_SESSION = 8
# A round of a group tries at most this many MX hosts and this many distinct addresses among them.
MAX_MX_HOSTS = 5
MAX_MX_ADDRESSES = 5


@dataclass(frozen=True, slots=True)
class Answer:
    reply: Reply
    meaning: Meaning


UNREACHABLE = Answer(Reply(0, "no MX host answered"), Meaning.UNREACHABLE)
# A batch's own time ran out before the recipient's session did: ask again later (bulk).
OUT_OF_TIME = Answer(Reply(0, "not asked before the batch's time ran out"), Meaning.TRY_AGAIN)
NOT_PUBLIC = Answer(Reply(0, "every MX address is on a non-public network"), Meaning.UNREACHABLE)
# Every egress rests (refused for its reputation): nothing is asked, the rows are smtp_blocked at once.
RESTING = Answer(Reply(0, "every SMTP egress is resting after blocklist refusals"), Meaning.BLOCKED)


class Slots(Protocol):
    """Politeness: at most `per_host` sessions at once per egress and MX address."""

    per_host: int

    def held(self, address: str, egress: str = "") -> AbstractAsyncContextManager[None]: ...

    async def close(self) -> None: ...


@dataclass(slots=True)
class Findings:
    """What the sessions learnt: each recipient's answer, and each session's outcome."""

    answers: dict[str, Answer] = field(default_factory=dict)
    sessions: list[str] = field(default_factory=list)  # Session.outcome, one per session opened
    # (outcome, MX address, the reply) of each session turned away: what an operator reads when
    # `smtp_blocked` rises ("spamhaus", "reverse hostname", ...)
    refusals: list[tuple[str, str, Reply]] = field(default_factory=list)
    # Per egress name: sessions that went out through it, and those refused for its reputation.
    egress_sessions: Counter[str] = field(default_factory=Counter)
    egress_refused: Counter[str] = field(default_factory=Counter)
    # What the bounds left out: "mx_hosts" named beyond MAX_MX_HOSTS, "mx_addresses" beyond
    # MAX_MX_ADDRESSES or already tried this round.
    cut: Counter[str] = field(default_factory=Counter)


def probe_address(domain: str, key: bytes, today: date) -> str:
    """The catch-all probe: random-looking, but the same all day, so greylisting (keyed on
    sender, recipient and client) clears for it on a retry as it does for a real address."""
    digest = hmac.new(key, f"{domain}|{today.isoformat()}".encode(), hashlib.sha256).hexdigest()
    return f"{digest[:20]}@{domain}"


def lock_slot(directory: str | Path, name: str, count: int) -> int | None:
    """One of `name`'s `count` per-machine lock files, if one is free (its descriptor: close it to
    give the slot back; the kernel does so when the process dies), else None at once. HostSlots
    takes them per MX address; the bulk workers' deep-chunk gate (jobs/fair_share.py) by name."""
    for slot in random.sample(range(count), count):
        path = Path(directory) / f"{name}.{slot}"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:  # made on first use, not asked after at every session (a stat and a raise)
            Path(directory).mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return fd
    return None


class HostSlots:
    """At most `per_host` sessions at once to one address from this machine (module docstring)."""

    def __init__(self, directory: str | Path, per_host: int) -> None:
        self.directory = Path(directory)
        self.per_host = per_host
        self.directory.mkdir(parents=True, exist_ok=True)

    @contextlib.asynccontextmanager
    async def held(self, address: str, egress: str = "") -> AsyncIterator[None]:
        fd = await self._acquire(address, egress)
        try:
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    async def close(self) -> None:
        return None  # nothing held between sessions

    async def _acquire(self, address: str, egress: str) -> int:
        name = ipaddress.ip_address(address).exploded.replace(":", "-")
        if egress:  # the default egress keeps the address's own files
            name = hashlib.sha256(egress.encode()).hexdigest()[:12] + "-" + name
        while (fd := lock_slot(self.directory, name, self.per_host)) is None:
            await asyncio.sleep(_SLOT_POLL_SECONDS)
        return fd


@dataclass
class Prober:
    config: SmtpConfig
    resolve: HostResolver
    allowed: AddressCheck
    slots: Slots
    backoff_tries: int = _BACKOFF_TRIES  # a single request, which answers at once, tries fewer
    egresses: tuple[Egress, ...] = (DIRECT,)  # the healthy ones; none: every recipient is RESTING
    findings: Findings = field(default_factory=Findings)
    _turn: int = 0

    async def ask(
        self, work: Mapping[tuple[str, ...], list[str]], timeout: float, unanswered: Answer = UNREACHABLE
    ) -> Findings:
        """Ask about every recipient: `work` maps MX hosts in preference order to the recipients of
        the domains they serve. Whatever is unanswered after `timeout` seconds gets `unanswered`:
        a single request's limit means the MX was too slow (UNREACHABLE), a batch's is ours
        (OUT_OF_TIME). With no egress to use, nothing is asked: every recipient is RESTING."""
        try:
            async with asyncio.timeout(timeout):
                merged = await self._by_address(work) if self.egresses else {}
                await asyncio.gather(
                    *(
                        self._group(hosts, share)
                        for hosts, recipients in merged.items()
                        for share in _shares(recipients, self.slots.per_host)
                    )
                )
        except TimeoutError:
            pass
        finally:
            await self.slots.close()
        for recipients in work.values():
            for recipient in recipients:
                self.findings.answers.setdefault(recipient, unanswered if self.egresses else RESTING)
        return self.findings

    async def _by_address(self, work: Mapping[tuple[str, ...], list[str]]) -> dict[tuple[str, ...], list[str]]:
        """The groups, those whose MX hosts resolve to the same addresses made one: MX host names that
        differ but lead to one address (a host name per Microsoft 365 tenant) share its sessions."""
        keys = await asyncio.gather(*(self._addresses_of(hosts) for hosts in work))
        leader: dict[tuple[str, ...], tuple[str, ...]] = {}  # addresses -> the first hosts leading there
        merged: dict[tuple[str, ...], list[str]] = {}
        for (hosts, recipients), addresses in zip(work.items(), keys, strict=True):
            first = leader.setdefault(addresses, hosts) if addresses else hosts  # unresolved: alone
            merged.setdefault(first, []).extend(recipients)
        return merged

    async def _addresses_of(self, hosts: tuple[str, ...]) -> tuple[str, ...]:
        return await mx_addresses(self.resolve, hosts)

    async def _group(self, hosts: tuple[str, ...], recipients: list[str]) -> None:
        waiting = list(recipients)
        for attempt in range(self.backoff_tries + 1):
            found = await self._first_host_that_answers(hosts, waiting)
            if isinstance(found, Answer):
                self._settle(waiting, found)
                return
            waiting = await self._take(found, waiting)
            if not waiting:
                return
            if found.failure is None or not _backs_off(found.failure) or attempt == self.backoff_tries:
                # Still turned away at the door: no host accepted a connection.
                self._settle(waiting, UNREACHABLE if found.refused_at_connect else _failure_answer(found))
                return
            # Jittered: groups turned away together must not all come back together.
            await asyncio.sleep(_BACKOFF_SECONDS * 2**attempt * random.uniform(0.5, 1.5))

    async def _take(self, session: Session, waiting: list[str]) -> list[str]:
        """Record the session's answers; ask the recipients it could not take one at a time.
        Returns the recipients still waiting when the session was cut off."""
        for recipient, reply in session.answers.items():
            self.findings.answers[recipient] = Answer(reply, meaning(reply))
        rest = [r for r in waiting if r not in session.answers]
        if session.failure is not None:
            return rest
        for recipient in rest:  # the server took no more recipients in that session
            alone = await self._session(session.address, [recipient])
            if recipient in alone.answers:
                self.findings.answers[recipient] = Answer(alone.answers[recipient], meaning(alone.answers[recipient]))
            else:
                self.findings.answers[recipient] = _failure_answer(alone)
        return []

    async def _first_host_that_answers(self, hosts: Sequence[str], recipients: list[str]) -> Session | Answer:
        """The session of the first MX address that took it, or the answer for every recipient
        when none did. When every host said "too busy", the last session: the caller backs off.
        Bounded (module docstring): MAX_MX_HOSTS hosts, MAX_MX_ADDRESSES addresses, each once."""
        last: Session | None = None
        none_public = False
        tried: set[str] = set()
        named = list(dict.fromkeys(hosts))
        self.findings.cut["mx_hosts"] += max(0, len(named) - MAX_MX_HOSTS)
        for host in named[:MAX_MX_HOSTS]:
            addresses = await self.resolve(host)
            public = [address for address in addresses if self.allowed(address)]
            none_public = none_public or bool(addresses and not public)
            for address in public:
                if address in tried or len(tried) >= MAX_MX_ADDRESSES:
                    self.findings.cut["mx_addresses"] += 1
                    continue
                tried.add(address)
                last = await self._session(address, recipients)
                if not last.refused_at_connect:
                    return last
        if last is None:
            return NOT_PUBLIC if none_public else UNREACHABLE
        if last.failure is not None and _backs_off(last.failure):
            return last
        return UNREACHABLE

    async def _session(self, address: str, recipients: list[str]) -> Session:
        """One session, through the egresses in turn until one is not refused for its reputation."""
        for egress in self._egress_order():
            session = await self._session_through(egress, address, recipients)
            if not is_reputation_refusal(session):
                return session
            self.findings.egress_refused[egress.name] += 1
        return session

    def _egress_order(self) -> list[Egress]:
        """Sessions spread over the egresses in turn; one refused for its reputation in this run goes last."""
        self._turn += 1
        start = self._turn % len(self.egresses)
        turn = [*self.egresses[start:], *self.egresses[:start]]
        return sorted(turn, key=lambda egress: self.findings.egress_refused[egress.name] > 0)

    async def _session_through(self, egress: Egress, address: str, recipients: list[str]) -> Session:
        lock = "" if egress is DIRECT else egress.name
        async with self.slots.held(address, lock):
            session = await run_session(address, recipients, egress.config(self.config))
        self.findings.sessions.append(session.outcome)
        self.findings.egress_sessions[egress.name] += 1
        if session.refusal is not None:
            self.findings.refusals.append((session.outcome, address, session.refusal))
        return session

    def _settle(self, recipients: list[str], answer: Answer) -> None:
        for recipient in recipients:
            self.findings.answers.setdefault(recipient, answer)


async def mx_addresses(resolve: HostResolver, hosts: Sequence[str]) -> tuple[str, ...]:
    """The addresses a group's sessions may go to: those of its first MAX_MX_HOSTS hosts (the bound
    of Bounded work, so a hostile MX record set costs no more lookups here either). Groups whose
    hosts lead to the same addresses share sessions."""
    found: list[str] = []
    for host in list(dict.fromkeys(hosts))[:MAX_MX_HOSTS]:
        found.extend(await resolve(host))
    return tuple(dict.fromkeys(found))


def sessions_needed(recipients: int, per_host: int) -> int:
    """How many sessions at once a group of `recipients` is dealt among (module docstring)."""
    return max(1, min(per_host, recipients // RECIPIENTS_A_SESSION))


def _shares(recipients: list[str], sessions: int) -> list[list[str]]:
    """A group's recipients dealt among up to `sessions` sessions run at once: an address's twenty
    recipients and four probes take three sessions of eight RCPTs, not one of twenty-four."""
    count = sessions_needed(len(recipients), sessions)
    return [recipients[i::count] for i in range(count)]


def _backs_off(reply: Reply) -> bool:
    return meaning(reply, recipient=False) is Meaning.TOO_MANY_CONNECTIONS


def _failure_answer(session: Session) -> Answer:
    if session.failure is None:
        return UNREACHABLE
    found = meaning(session.failure, recipient=False)
    if found is Meaning.TOO_MANY_CONNECTIONS:
        found = Meaning.TRY_AGAIN  # still busy after every back-off: ask again later
    return Answer(session.failure, found)
