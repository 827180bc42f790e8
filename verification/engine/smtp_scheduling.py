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
concurrently on one event loop; what bounds them is politeness.

Politeness, at most `per_host` sessions at once per egress and MX address, is smtp_slots.py's.
A session refused for the egress's own reputation is asked again through the next egress before
any recipient is judged; with no egress to use (all resting) every recipient answers RESTING.

A rate limit (421, "too many connections", at the banner or later) is no verdict, and no sign of
an unreachable host: the server answered. The address's allowance (allowance.py) learns from it
(fewer sessions at once, spaced starts); the refused recipients are folded into the sessions still
open there, and the rest asked again once the allowance lets a session in, while tries and
deadline allow; past them they are "ask again later" (greylisted), never unreachable. A recipient
refused as one too many is asked again in a session of its own.

A batch in parts (`run`, `run_streamed`): a large batch's work comes a part at a time while the
caller plans the next. Each round's groups join their address's feed (_Feed), which gets as many
sessions at once as its recipients so far need; a session that has asked its share waits for the
next part rather than end, takes a fair share of what came to its address (whole domains), and
ends once the stream is closed and the feed empty. A share is an equal run, to the end of the
domain it would cut when that makes it at most a quarter larger. `ask` is one part, closed at once:
the sessions of a group are then dealt its recipients from the start, as they always were.

The first part's sessions get past their greeting (banner, EHLO) before the next part is planned:
their replies would otherwise wait in the sockets while it is (`Prober.until_asking`).

The idle window (`run_streamed`'s `idle`): once the last part is planned, the caller's thread has
nothing to do but wait for the sessions, seconds in a large batch. Every IDLE_SLICE it is handed
the answers that came in meanwhile (`Prober.news`, the open sessions' replies among them) to do
with them what would otherwise wait for the last session: build verdicts, store answers, a little
at a time, since the sessions wait while it works. An answer read there may still change (a
session refused for its egress's reputation is asked again through another), so what was made of
it is used at the end only where the findings agree.

Bounded work (docs/deep.md, "Bounded work"): a group tries at most MAX_MX_HOSTS of its MX hosts,
in preference order (RFC 5321 section 5.1 lets a client cap them), at most MAX_MX_ADDRESSES
addresses among them, and each address once a round; whatever a hostile MX record set names
beyond that is never looked up or contacted, only counted (`Findings.cut`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from verification.engine.allowance import Throttled
from verification.engine.egress import DIRECT, Egress, is_reputation_refusal
from verification.engine.smtp import More, Session, SmtpConfig, run_session
from verification.engine.smtp_answers import (
    NOT_PUBLIC,
    RESTING,
    THROTTLED,
    UNREACHABLE,
    Answer,
    Findings,
)
from verification.engine.smtp_replies import Meaning, meaning
from verification.engine.smtp_slots import Slots

HostResolver = Callable[[str], Awaitable[list[str]]]  # MX host name -> its addresses
AddressCheck = Callable[[str], bool]  # may this address be contacted?

# A group refused for our rate asks again at most this many times, each after the spacing its
# address's allowance sets (1 s, doubling: 127 s in all at the most), while its deadline allows.
_BACKOFF_TRIES = 8
# A group is dealt among up to `per_host` sessions at once, each of at least this many recipients
# (twice a session's four replies of overhead).
RECIPIENTS_A_SESSION = 8
# A round of a group tries at most this many MX hosts and this many distinct addresses among them.
MAX_MX_HOSTS = 5
MAX_MX_ADDRESSES = 5
# A batch in parts (run_streamed): the longest its planning waits for a part's sessions to start,
# and for the first part's, to be past their greeting (banner, EHLO) and asking.
PART_WAIT = 0.05
GREETING_WAIT = 0.25
# The idle window (module docstring): how long the sessions run between two calls of the idle work.
IDLE_SLICE = 0.05


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
    _deadline: float = math.inf  # the event loop's time when ask() gives up
    # MX address -> recipients turned away there for our rate, for an open session to fold in
    _orphans: dict[str, list[str]] = field(default_factory=dict)
    _leader: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)  # addresses -> first hosts there
    _feeds: dict[tuple[str, ...], _Feed] = field(default_factory=dict)  # a group's first hosts -> its feed
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)  # every group's, while they run
    _open: dict[int, Session] = field(default_factory=dict)  # the sessions running, by id()
    _opened: dict[asyncio.Task[None], Session] = field(default_factory=dict)  # each group task's latest session
    _told: dict[int, int] = field(default_factory=dict)  # per open session: its answers `news` has told
    _told_findings: int = 0  # the findings' answers `news` has looked at
    _told_open: set[str] = field(default_factory=set)  # the recipients `news` told from open sessions

    async def ask(
        self, work: Mapping[tuple[str, ...], list[str]], timeout: float, unanswered: Answer = UNREACHABLE
    ) -> Findings:
        """Ask about every recipient: `work` maps MX hosts in preference order to the recipients of
        the domains they serve. Whatever is unanswered after `timeout` seconds gets `unanswered`:
        a single request's limit means the MX was too slow (UNREACHABLE), a batch's is ours
        (OUT_OF_TIME). With no egress to use, nothing is asked: every recipient is RESTING."""
        stream = Stream()
        stream.add(work)
        stream.close()
        return await self.run(stream, timeout, unanswered)

    async def run(self, stream: Stream, timeout: float, unanswered: Answer = UNREACHABLE) -> Findings:
        """`ask`, for work that comes in parts (`stream`, module docstring "A batch in parts"): each
        part's groups are dealt among sessions as it comes, and the sessions open at an address take
        the later parts' recipients there; they end once the stream is closed and drained."""
        self._deadline = asyncio.get_running_loop().time() + timeout
        try:
            async with asyncio.timeout(timeout):
                await self._rounds(stream)
        except TimeoutError:
            pass
        finally:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self.slots.close()
        return self.findings_for(stream, unanswered)

    def news(self) -> list[tuple[str, Answer]]:
        """The answers that came in since the last call: the findings' new ones, and the replies the
        open sessions got meanwhile (module docstring, "The idle window"; both only ever grow). Not
        final (a recipient told from its open session is not told again from the findings, though
        another session may have asked it since): whoever uses them checks them against the
        findings at the end."""
        found = list(itertools.islice(self.findings.answers.items(), self._told_findings, None))
        self._told_findings += len(found)
        news = [(recipient, answer) for recipient, answer in found if recipient not in self._told_open]
        for key, session in self._open.items():
            told = self._told.get(key, 0)
            replies = list(itertools.islice(session.answers.items(), told, None))
            self._told[key] = told + len(replies)
            self._told_open.update(recipient for recipient, _ in replies)
            news.extend((recipient, Answer(reply, meaning(reply))) for recipient, reply in replies)
        return news

    async def until_asking(self) -> None:
        """Until each group task's session is past its greeting and asking (or the task is done): a
        batch's first part waits for it before the next is planned, the sessions' banner and EHLO
        replies being otherwise read only once that planning is over."""
        while any(not (task.done() or (s := self._opened.get(task)) and s.asking) for task in self._tasks):
            await asyncio.sleep(0.005)  # not a wait for time: a poll of the sessions' step

    def findings_for(self, stream: Stream, answer: Answer) -> Findings:
        """The findings, every recipient of the stream's parts not answered given `answer` (RESTING
        without an egress): those of parts added after the deadline too (run_streamed)."""
        for work in stream.parts:
            for recipients in work.values():
                for recipient in recipients:
                    self.findings.answers.setdefault(recipient, answer if self.egresses else RESTING)
        return self.findings

    async def _rounds(self, stream: Stream) -> None:
        """Each round: the parts come since the last, their groups dealt (none without an egress). Once
        the stream is closed and drained, the sessions waiting for more end, and every group's task."""
        while (parts := await stream.next()) is not None:
            if self.egresses:
                await self._round(parts)
            stream.dealt(len(stream.parts))
        for feed in self._feeds.values():
            feed.close()
        while pending := [task for task in self._tasks if not task.done()]:
            await asyncio.wait(pending)
        for task in self._tasks:
            task.result()  # a failure of ours fails the batch

    async def _round(self, parts: list[dict[tuple[str, ...], list[str]]]) -> None:
        """The groups of a round's parts, those whose MX hosts resolve to the same addresses made one:
        MX host names that differ but lead to one address (a host name per Microsoft 365 tenant) share
        its sessions, whichever part they came in. Each group's recipients join its feed, which gets
        as many sessions at once as its recipients so far need and its first address's allowance lets
        (an address that limits our rate gets one session carrying every recipient, not three spaced
        apart)."""
        work: dict[tuple[str, ...], list[str]] = {}
        for part in parts:
            for hosts, recipients in part.items():
                work.setdefault(hosts, []).extend(recipients)
        keys = await asyncio.gather(*(mx_addresses(self.resolve, hosts) for hosts in work))
        touched: dict[tuple[str, ...], _Feed] = {}
        for (hosts, recipients), addresses in zip(work.items(), keys, strict=True):
            first = self._leader.setdefault(addresses, hosts) if addresses else hosts  # unresolved: alone
            feed = self._feeds.get(first) or self._feeds.setdefault(first, _Feed(first, addresses))
            feed.push(recipients)
            touched[first] = feed
        counts = await asyncio.gather(*(self._allowed(feed.addresses, feed.seen) for feed in touched.values()))
        for feed, count in zip(touched.values(), counts, strict=True):
            wanted = sessions_needed(feed.seen, count)
            while feed.live < wanted and feed.pending:
                self._start(feed, feed.cut(wanted - feed.live))

    def _start(self, feed: _Feed, recipients: list[str]) -> None:
        """A group's task for a share of its feed: its sessions take more from the feed as they go."""
        feed.live += 1
        self._tasks.append(asyncio.get_running_loop().create_task(self._fed(feed, recipients)))

    async def _fed(self, feed: _Feed, recipients: list[str]) -> None:
        try:
            await self._group(feed.hosts, recipients, feed)
        finally:
            feed.live -= 1
        if feed.pending and not feed.live:  # its sessions ended early: what is left gets a task of its own
            self._start(feed, feed.cut(1))

    async def _allowed(self, addresses: tuple[str, ...], recipients: int) -> int:
        """A group's sessions at once: its first address's allowance (the ceiling, unresolved), read
        only for a group large enough for more than one (most groups are one domain's few rows)."""
        if not addresses or sessions_needed(recipients, self.slots.per_host) == 1:
            return self.slots.per_host
        egress = self.egresses[0]
        return await self.slots.allowed(addresses[0], "" if egress is DIRECT else egress.name)

    async def _group(self, hosts: tuple[str, ...], recipients: list[str], feed: _Feed | None = None) -> None:
        """Ask the group's recipients, and those its sessions take from `feed` meanwhile; those refused
        for our rate are handed to the sessions open at the address (_orphans) and asked again once its
        allowance lets a session in, while the tries and the deadline allow (then: asked again later)."""
        waiting = list(recipients)

        async def fed() -> list[str]:
            share = await feed.take() if feed is not None else []
            waiting.extend(share)  # the group's own from now on, answered or not
            return share

        try:
            for attempt in range(self.backoff_tries + 1):
                found = await self._first_host_that_answers(hosts, waiting, fed)
                if isinstance(found, Answer):
                    self._settle(waiting, found)
                    return
                waiting = await self._take(found, waiting)
                if not waiting:
                    return
                if not _rate_limited(found) or attempt == self.backoff_tries:
                    self._settle(waiting, _failure_answer(found))
                    return
                self._orphans.setdefault(found.address, []).extend(waiting)
        except Throttled:
            self._settle(waiting, THROTTLED)

    async def _take(self, session: Session, waiting: list[str]) -> list[str]:
        """Record the session's answers; ask the recipients it could not take one at a time.
        Returns the recipients still waiting when the session was cut off."""
        for recipient, reply in session.answers.items():
            self.findings.answers[recipient] = Answer(reply, meaning(reply))
        rest = [r for r in waiting if r not in self.findings.answers]  # nor asked by a sibling (_orphans)
        if session.failure is not None:
            return rest
        for recipient in rest:  # the server took no more recipients in that session
            alone = await self._session(session.address, [recipient])
            if recipient in alone.answers:
                self.findings.answers[recipient] = Answer(alone.answers[recipient], meaning(alone.answers[recipient]))
            else:
                self.findings.answers[recipient] = _failure_answer(alone)
        return []

    async def _first_host_that_answers(
        self, hosts: Sequence[str], recipients: list[str], fed: More | None = None
    ) -> Session | Answer:
        """The session of the first MX address that took it, or the answer for every recipient
        when none did; when a host answered but turned us away at the door, its session (one
        refused for our rate first: the caller asks again), since only silence is unreachable.
        Bounded (module docstring): MAX_MX_HOSTS hosts, MAX_MX_ADDRESSES addresses, each once."""
        turned_away: list[Session] = []
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
                session = await self._session(address, recipients, fed)
                if not session.refused_at_connect:
                    return session
                turned_away.append(session)
        if not turned_away:
            return NOT_PUBLIC if none_public else UNREACHABLE
        answered = [session for session in turned_away if session.failure is not None and session.failure.code]
        return next((s for s in answered if _rate_limited(s)), None) or next(iter(answered[::-1]), UNREACHABLE)

    async def _session(self, address: str, recipients: list[str], fed: More | None = None) -> Session:
        """One session, through the egresses in turn until one is not refused for its reputation."""
        for egress in self._egress_order():
            session = await self._session_through(egress, address, recipients, fed)
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

    async def _session_through(
        self, egress: Egress, address: str, recipients: list[str], fed: More | None = None
    ) -> Session:
        lock = "" if egress is DIRECT else egress.name
        async with self.slots.held(address, lock, deadline=self._deadline) as turn:
            asked = [r for r in recipients if r not in self.findings.answers]  # a sibling may have asked some
            if not asked:
                return Session(address)
            session = Session(address)
            self._open[id(session)] = session
            if (task := asyncio.current_task()) is not None:
                self._opened[task] = session
            try:
                await run_session(address, asked, egress.config(self.config), self._more_at(address, fed), session)
            finally:
                del self._open[id(session)]
                self._told.pop(id(session), None)
            turn.rate_limited, turn.completed = _rate_limited(session), session.failure is None
        self.findings.sessions.append(session.outcome)
        self.findings.egress_sessions[egress.name] += 1
        if session.refusal is not None:
            self.findings.refusals.append((session.outcome, address, session.refusal))
        return session

    def _more_at(self, address: str, fed: More | None) -> More:
        """What a session at `address` asks once its own recipients are answered: the orphans there not
        answered yet, taken (their own session asks what is left); else its group's next share of the
        feed (`fed`), waited for while parts may come; else nothing."""

        async def more() -> list[str]:
            orphans = self._orphans.pop(address, [])
            if taken := list(dict.fromkeys(r for r in orphans if r not in self.findings.answers)):
                return taken
            return await fed() if fed is not None else []

        return more

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


class Stream:
    """A batch's work as it comes (Prober.run): parts added by a caller that plans the next meanwhile,
    then closed. Each part maps MX hosts to recipients, as `ask`'s work does."""

    def __init__(self) -> None:
        self.parts: list[dict[tuple[str, ...], list[str]]] = []
        self.closed = False
        self._read = 0  # parts the prober has taken
        self._dealt = 0  # parts whose groups have their sessions
        self._changed = asyncio.Event()

    def add(self, work: Mapping[tuple[str, ...], list[str]]) -> None:
        self.parts.append(dict(work))
        self._changed.set()

    def close(self) -> None:
        self.closed = True
        self._changed.set()

    async def next(self) -> list[dict[tuple[str, ...], list[str]]] | None:
        """The parts added since the last call, waited for; None once closed and every part read."""
        while self._read == len(self.parts) and not self.closed:
            self._changed.clear()
            await self._changed.wait()
        if self._read == len(self.parts):
            return None
        parts, self._read = self.parts[self._read :], len(self.parts)
        return parts

    def dealt(self, count: int) -> None:
        self._dealt = count
        self._changed.set()

    async def until_dealt(self, count: int) -> None:
        """Until the first `count` parts' groups have their sessions (or are answered without)."""
        while self._dealt < count:
            self._changed.clear()
            await self._changed.wait()


def run_streamed(
    prober: Prober,
    parts: Iterable[Mapping[tuple[str, ...], list[str]]],
    timeout: float,
    unanswered: Answer,
    idle: Callable[[list[tuple[str, Answer]]], None] | None = None,
) -> Findings:
    """`prober.run` on an event loop of this thread, fed by `parts`, an iterator whose plain code (a
    batch planning its next part: the fast rules, the caches, its own DNS) runs between the loop's
    turns, never while it runs: after each part, the loop runs until that part's groups have their
    sessions (at most PART_WAIT seconds), and then on while the next part is planned only in so far
    as the sessions' replies wait in the sockets meanwhile (module docstring, "A batch in parts");
    after the first part, until its sessions are past their greeting (at most GREETING_WAIT). Once
    the last part is in, `idle` is called with the answers that came in meanwhile every IDLE_SLICE
    seconds while the sessions run (module docstring, "The idle window")."""
    stream = Stream()
    with asyncio.Runner() as runner:  # which cancels what is left of the task should a part fail
        loop = runner.get_loop()  # its run_until_complete: Runner.run's SIGINT handler costs a task's repr a call
        task = loop.create_task(prober.run(stream, timeout, unanswered))
        for work in parts:
            stream.add(work)
            loop.run_until_complete(_at_most(stream.until_dealt(len(stream.parts)), PART_WAIT))
            if len(stream.parts) == 1:
                loop.run_until_complete(_at_most(prober.until_asking(), GREETING_WAIT))
        stream.close()
        while idle is not None and not task.done():
            loop.run_until_complete(asyncio.wait([task], timeout=IDLE_SLICE))
            if not task.done():
                idle(prober.news())
        loop.run_until_complete(task)
    return prober.findings_for(stream, unanswered)


async def _at_most(awaitable: Awaitable[None], seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(awaitable, seconds)


@dataclass(eq=False)
class _Feed:
    """The recipients at one MX address (a group: its first hosts, and where they lead) not yet taken
    by a session: a round's are dealt among the sessions it starts, a later round's are taken by the
    sessions open there as they finish (a fair share each), or by sessions of their own."""

    hosts: tuple[str, ...]
    addresses: tuple[str, ...]
    pending: list[str] = field(default_factory=list)
    seen: int = 0  # recipients it has had, taken or not
    live: int = 0  # the group tasks taking from it
    closed: bool = False  # no more will come
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def push(self, recipients: list[str]) -> None:
        """Recipients join the line a domain at a time (its addresses, then its probe), so that a
        domain lands whole in one session, bar one cut by a share, and its probe follows its
        addresses' replies there (smtp.py, `_probes_known`)."""
        by_domain: dict[str, list[str]] = {}
        for recipient in recipients:
            by_domain.setdefault(recipient.rpartition("@")[2], []).append(recipient)
        self.pending.extend(recipient for same in by_domain.values() for recipient in same)
        self.seen += len(recipients)
        self.changed.set()

    def cut(self, ways: int) -> list[str]:
        """The next share of the line, were what waits dealt `ways` ways in equal runs; to the end of
        the domain it would cut when that is at most a quarter more (equal runs matter more: a
        session's share is its time on the wire; a domain kept whole spares its probe only when its
        refused address would have landed in the other share)."""
        pending = self.pending
        size = -(-len(pending) // max(1, ways))
        if 0 < size < len(pending):
            domain = pending[size - 1].rpartition("@")[2]
            end, most = size, min(len(pending), size + size // 4)
            while end < most and pending[end].rpartition("@")[2] == domain:
                end += 1
            if end == len(pending) or pending[end].rpartition("@")[2] != domain:
                size = end
        share, self.pending = pending[:size], pending[size:]
        return share

    async def take(self) -> list[str]:
        """A session's next share (one of the tasks taking from it): waited for while the feed is open;
        [] once it is closed and empty."""
        while not self.pending and not self.closed:
            self.changed.clear()
            await self.changed.wait()
        return self.cut(self.live)

    def close(self) -> None:
        self.closed = True
        self.changed.set()


def _rate_limited(session: Session) -> bool:
    """Turned away for our rate or number of connections, at the banner or later: the server answered."""
    return session.failure is not None and meaning(session.failure, recipient=False) is Meaning.TOO_MANY_CONNECTIONS


def _failure_answer(session: Session) -> Answer:
    """What a session that ended early says of the recipients it did not get to: unreachable only
    when nothing answered (a connection refused, a silence, a cut); else the reply's meaning, a rate
    limit still in force after every try being "ask again later"."""
    if session.failure is None or not session.failure.code:
        return UNREACHABLE
    found = meaning(session.failure, recipient=False)
    return Answer(session.failure, Meaning.TRY_AGAIN if found is Meaning.TOO_MANY_CONNECTIONS else found)
