"""Which MX address to ask about which mailboxes, and when: the scheduling of deep verification.

Recipients are grouped by their domains' MX hosts (domains naming the same hosts, as every domain
one provider hosts does, share a group): each group's recipients (the addresses, then the
catch-all probes) go to its MX hosts in preference order, in one session where the server
allows (a group of more than RECIPIENTS_A_SESSION is dealt among up to `per_host` sessions): a
host that refuses, stays silent or answers 4xx at connect passes the turn to the next. Groups run
concurrently on one event loop; what bounds them is politeness:

At most `per_host` sessions at once from this machine to one MX address, whatever the number of
processes. Each session holds one of `per_host` lock files for its address (`fcntl.flock`,
non-blocking): a lock is per machine by nature (the lock directory is local), the kernel drops it
when its process dies however it dies (no lease to expire or tune, nothing to clean up after
kill -9), and it costs no database or Redis round trip. One machine's limit is all we promise
(docs/deep.md): a second machine has its own IP address, which the MX counts apart.

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
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from verification.engine.smtp import Session, SmtpConfig, run_session
from verification.engine.smtp_replies import Meaning, Reply, meaning

HostResolver = Callable[[str], Awaitable[list[str]]]  # MX host name -> its addresses
AddressCheck = Callable[[str], bool]  # may this address be contacted?

# A 421 backs a group off about this long (jittered), doubling each time, while its deadline allows.
_BACKOFF_SECONDS = 0.5
_BACKOFF_TRIES = 5
_SLOT_POLL_SECONDS = 0.02
# A group with more recipients than this is shared among up to `per_host` sessions run at once.
RECIPIENTS_A_SESSION = 20
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


@dataclass(slots=True)
class Findings:
    """What the sessions learnt: each recipient's answer, and each session's outcome."""

    answers: dict[str, Answer] = field(default_factory=dict)
    sessions: list[str] = field(default_factory=list)  # Session.outcome, one per session opened
    # (outcome, MX address, the reply) of each session turned away: what an operator reads when
    # `smtp_blocked` rises ("spamhaus", "reverse hostname", ...)
    refusals: list[tuple[str, str, Reply]] = field(default_factory=list)
    # What the bounds left out: "mx_hosts" named beyond MAX_MX_HOSTS, "mx_addresses" beyond
    # MAX_MX_ADDRESSES or already tried this round.
    cut: Counter[str] = field(default_factory=Counter)


def probe_address(domain: str, key: bytes, today: date) -> str:
    """The catch-all probe: random-looking, but the same all day, so greylisting (keyed on
    sender, recipient and client) clears for it on a retry as it does for a real address."""
    digest = hmac.new(key, f"{domain}|{today.isoformat()}".encode(), hashlib.sha256).hexdigest()
    return f"{digest[:20]}@{domain}"


class HostSlots:
    """At most `per_host` sessions at once to one address from this machine (module docstring).
    The same lock files bound other per-machine things by name (bulk workers on deep chunks)."""

    def __init__(self, directory: str | Path, per_host: int) -> None:
        self.directory = Path(directory)
        self.per_host = per_host
        self.directory.mkdir(parents=True, exist_ok=True)

    @contextlib.asynccontextmanager
    async def held(self, address: str) -> AsyncIterator[None]:
        fd = await self._acquire(address)
        try:
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def try_take(self, name: str) -> int | None:
        """One of `name`'s slots if one is free (its descriptor: close it to give the slot back),
        else None at once."""
        for slot in random.sample(range(self.per_host), self.per_host):
            fd = os.open(self.directory / f"{name}.{slot}", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return fd
        return None

    async def _acquire(self, address: str) -> int:
        name = ipaddress.ip_address(address).exploded.replace(":", "-")
        while (fd := self.try_take(name)) is None:
            await asyncio.sleep(_SLOT_POLL_SECONDS)
        return fd


@dataclass
class Prober:
    config: SmtpConfig
    resolve: HostResolver
    allowed: AddressCheck
    slots: HostSlots
    backoff_tries: int = _BACKOFF_TRIES  # a single request, which answers at once, tries fewer
    findings: Findings = field(default_factory=Findings)

    async def ask(
        self, work: Mapping[tuple[str, ...], list[str]], timeout: float, unanswered: Answer = UNREACHABLE
    ) -> Findings:
        """Ask about every recipient: `work` maps MX hosts in preference order to the recipients of
        the domains they serve. Whatever is unanswered after `timeout` seconds gets `unanswered`:
        a single request's limit means the MX was too slow (UNREACHABLE), a batch's is ours
        (OUT_OF_TIME)."""
        try:
            async with asyncio.timeout(timeout):
                await asyncio.gather(
                    *(
                        self._group(hosts, share)
                        for hosts, recipients in work.items()
                        for share in _shares(recipients, self.slots.per_host)
                    )
                )
        except TimeoutError:
            pass
        for recipients in work.values():
            for recipient in recipients:
                self.findings.answers.setdefault(recipient, unanswered)
        return self.findings

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
        async with self.slots.held(address):
            session = await run_session(address, recipients, self.config)
        self.findings.sessions.append(session.outcome)
        if session.refusal is not None:
            self.findings.refusals.append((session.outcome, address, session.refusal))
        return session

    def _settle(self, recipients: list[str], answer: Answer) -> None:
        for recipient in recipients:
            self.findings.answers.setdefault(recipient, answer)


def _shares(recipients: list[str], sessions: int) -> list[list[str]]:
    """A large group's recipients dealt among up to `sessions` sessions (a few domains' hundreds
    of rows need not queue behind one connection when the cap allows three)."""
    count = max(1, min(sessions, -(-len(recipients) // RECIPIENTS_A_SESSION)))
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
