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

Bounded work (docs/deep.md, "Bounded work"): a group tries at most MAX_MX_HOSTS of its MX hosts,
in preference order (RFC 5321 section 5.1 lets a client cap them), at most MAX_MX_ADDRESSES
addresses among them, and each address once a round; whatever a hostile MX record set names
beyond that is never looked up or contacted, only counted (`Findings.cut`).
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from verification.engine.allowance import Throttled
from verification.engine.egress import DIRECT, Egress, is_reputation_refusal
from verification.engine.smtp import Session, SmtpConfig, run_session
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

    async def ask(
        self, work: Mapping[tuple[str, ...], list[str]], timeout: float, unanswered: Answer = UNREACHABLE
    ) -> Findings:
        """Ask about every recipient: `work` maps MX hosts in preference order to the recipients of
        the domains they serve. Whatever is unanswered after `timeout` seconds gets `unanswered`:
        a single request's limit means the MX was too slow (UNREACHABLE), a batch's is ours
        (OUT_OF_TIME). With no egress to use, nothing is asked: every recipient is RESTING."""
        self._deadline = asyncio.get_running_loop().time() + timeout
        try:
            async with asyncio.timeout(timeout):
                dealt = await self._dealt(work) if self.egresses else []
                await asyncio.gather(*(self._group(hosts, share) for hosts, share in dealt))
        except TimeoutError:
            pass
        finally:
            await self.slots.close()
        for recipients in work.values():
            for recipient in recipients:
                self.findings.answers.setdefault(recipient, unanswered if self.egresses else RESTING)
        return self.findings

    async def _dealt(self, work: Mapping[tuple[str, ...], list[str]]) -> list[tuple[tuple[str, ...], list[str]]]:
        """Each group dealt among as many sessions at once as its first address's allowance lets: an
        address that limits our rate gets one session carrying every recipient, not three spaced apart."""
        merged, keys = await self._by_address(work)
        counts = await asyncio.gather(*(self._allowed(keys[hosts], len(merged[hosts])) for hosts in merged))
        return [
            (hosts, share)
            for (hosts, recipients), count in zip(merged.items(), counts, strict=True)
            for share in _shares(recipients, count)
        ]

    async def _by_address(
        self, work: Mapping[tuple[str, ...], list[str]]
    ) -> tuple[dict[tuple[str, ...], list[str]], dict[tuple[str, ...], tuple[str, ...]]]:
        """The groups, those whose MX hosts resolve to the same addresses made one: MX host names that
        differ but lead to one address (a host name per Microsoft 365 tenant) share its sessions.
        And each group's addresses."""
        keys = await asyncio.gather(*(mx_addresses(self.resolve, hosts) for hosts in work))
        leader: dict[tuple[str, ...], tuple[str, ...]] = {}  # addresses -> the first hosts leading there
        merged: dict[tuple[str, ...], list[str]] = {}
        found: dict[tuple[str, ...], tuple[str, ...]] = {}
        for (hosts, recipients), addresses in zip(work.items(), keys, strict=True):
            first = leader.setdefault(addresses, hosts) if addresses else hosts  # unresolved: alone
            merged.setdefault(first, []).extend(recipients)
            found[first] = addresses
        return merged, found

    async def _allowed(self, addresses: tuple[str, ...], recipients: int) -> int:
        """A group's sessions at once: its first address's allowance (the ceiling, unresolved), read
        only for a group large enough for more than one (most groups are one domain's few rows)."""
        if not addresses or sessions_needed(recipients, self.slots.per_host) == 1:
            return self.slots.per_host
        egress = self.egresses[0]
        return await self.slots.allowed(addresses[0], "" if egress is DIRECT else egress.name)

    async def _group(self, hosts: tuple[str, ...], recipients: list[str]) -> None:
        """Ask the group's recipients; those refused for our rate are handed to the sessions open at
        the address (_orphans) and asked again once its allowance lets a session in, while the tries
        and the deadline allow (then: asked again later)."""
        waiting = list(recipients)
        try:
            for attempt in range(self.backoff_tries + 1):
                found = await self._first_host_that_answers(hosts, waiting)
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

    async def _first_host_that_answers(self, hosts: Sequence[str], recipients: list[str]) -> Session | Answer:
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
                session = await self._session(address, recipients)
                if not session.refused_at_connect:
                    return session
                turned_away.append(session)
        if not turned_away:
            return NOT_PUBLIC if none_public else UNREACHABLE
        answered = [session for session in turned_away if session.failure is not None and session.failure.code]
        return next((s for s in answered if _rate_limited(s)), None) or next(iter(answered[::-1]), UNREACHABLE)

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
        async with self.slots.held(address, lock, deadline=self._deadline) as turn:
            asked = [r for r in recipients if r not in self.findings.answers]  # a sibling may have asked some
            if not asked:
                return Session(address)
            session = await run_session(address, asked, egress.config(self.config), self._orphans_at(address))
            turn.rate_limited, turn.completed = _rate_limited(session), session.failure is None
        self.findings.sessions.append(session.outcome)
        self.findings.egress_sessions[egress.name] += 1
        if session.refusal is not None:
            self.findings.refusals.append((session.outcome, address, session.refusal))
        return session

    def _orphans_at(self, address: str) -> Callable[[], list[str]]:
        """The orphans at `address` not answered yet, taken (their own session asks what is left)."""
        return lambda: list(dict.fromkeys(r for r in self._orphans.pop(address, []) if r not in self.findings.answers))

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
    recipients and four probes take three sessions of eight RCPTs, not one of twenty-four. Dealt a
    domain at a time (its addresses, then its probe), cut into equal runs: a domain lands whole in
    one session, bar one cut a share, so that its probe follows its addresses' replies there
    (smtp.py, `_probes_known`)."""
    count = sessions_needed(len(recipients), sessions)
    if count == 1:
        return [recipients]
    by_domain: dict[str, list[str]] = {}
    for recipient in recipients:
        by_domain.setdefault(recipient.rpartition("@")[2], []).append(recipient)
    ordered = [recipient for same in by_domain.values() for recipient in same]
    size, extra = divmod(len(ordered), count)
    cuts = [i * size + min(i, extra) for i in range(count + 1)]
    return [ordered[start:end] for start, end in itertools.pairwise(cuts)]


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
