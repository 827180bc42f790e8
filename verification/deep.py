"""Deep verification wired to settings and the shared caches (docs/deep.md).

The fast rules 1-4 decide first and open no session; the rest go to their domains' MX hosts,
except what the shared caches already know: a mailbox's answer (for the verdict cache's
lifetimes, whoever asked) and a domain's catch-all answer (24 h).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import ipaddress
import logging
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from itertools import chain, islice
from pathlib import Path

import redis
from django.conf import settings
from django.utils import timezone

from lib import metrics
from lib.deferred import later
from lib.outbound import is_public
from verification.egresses import egress_sessions_record, egresses_healthy
from verification.engine import DomainAnswer, SubStatus, Verdict, verify_many
from verification.engine.allowance import Allowance, held_below
from verification.engine.core import DomainLookup
from verification.engine.deep import catch_all_of, deep_verdict, probe_address, verdict_replaced
from verification.engine.dns import LookupMeanwhile
from verification.engine.egress import Egress
from verification.engine.leases import ALLOWANCE_PREFIX, RedisLeases, allowance_from
from verification.engine.modes import ValidationMode
from verification.engine.mxhosts import host_resolver
from verification.engine.smtp import SmtpConfig
from verification.engine.smtp_answers import OUT_OF_TIME, UNREACHABLE, Answer, Findings
from verification.engine.smtp_scheduling import Prober, mx_addresses, run_streamed
from verification.engine.smtp_slots import HostSlots, Slots
from verification.engine.syntax import normalise, split
from verification.models import CatchAllAnswer, MailboxAnswer, SmtpSessionCount
from verification.resolver import domain_lookup, resolver_config

logger = logging.getLogger(__name__)

# Rules 1-4 decided these: no session for them.
_DECIDED_FAST = frozenset(
    {SubStatus.INVALID_SYNTAX, SubStatus.DNS_TEMPORARY_FAILURE, SubStatus.NO_MX_RECORD, SubStatus.DISPOSABLE}
)


def smtp_config() -> SmtpConfig:
    return SmtpConfig(
        helo=settings.VERIFIER_SMTP_HELO,
        mail_from=settings.VERIFIER_SMTP_FROM,
        port=settings.VERIFIER_SMTP_PORT,
        timeout=settings.VERIFIER_SMTP_TIMEOUT,
        proxy=settings.VERIFIER_SMTP_PROXY,
    )


def single_request_seconds() -> float:
    """What one request may spend on SMTP: 2 x the step timeout + 5 s, less a second for the rest."""
    return 2 * settings.VERIFIER_SMTP_TIMEOUT + 4


def may_contact(address: str) -> bool:
    """The callback guard's rule (lib/outbound.py): public addresses only, unless lifted for tests."""
    return settings.VERIFIER_SMTP_ALLOW_PRIVATE_NETWORKS or is_public(ipaddress.ip_address(address))


# A single request contacts each MX address once (docs/deep.md, Bounded work): a 421 is answered
# `unknown` at once (ask again later), never backed off and asked again within the request.
SINGLE_BACKOFF_TRIES = 0


# A deep batch is planned and asked in parts of this many rows: the sessions of the first part's
# MX addresses start while the next parts are planned (the fast rules, their DNS, the caches), and
# take those parts' recipients as they come (smtp_scheduling.py, "A batch in parts"). A batch of
# up to this many is one part, and its sessions are dealt its recipients from the start.
PART_ROWS = 2_000
# The idle window (smtp_scheduling.py): its work looks at the answers that came in this many at a
# time, for about this long a call, since the sessions wait meanwhile.
IDLE_ROWS = 200
IDLE_SECONDS = 0.01


@dataclass
class _Plan:
    """Who to ask what, built a part at a time (`add`): each candidate's domain, each of their
    domains' catch-all answer (cached, or its probe's address), and per list of MX hosts the
    recipients no cache answers."""

    probe_key: bytes  # the probes' addresses are made with it (deep.py `probe_address`)
    today: date
    domain_of: dict[str, str] = field(default_factory=dict)  # email -> its ASCII domain, parsed once
    catch_all: dict[str, bool] = field(default_factory=dict)  # domain -> cached answer
    probes: dict[str, str] = field(default_factory=dict)  # each domain without a cached answer -> its probe
    # Each probe -> its domain. Its keys are the sessions' SmtpConfig.probes: each part's join them
    # before its work is handed over.
    probe_domains: dict[str, str] = field(default_factory=dict)
    known: dict[str, Answer] = field(default_factory=dict)  # email -> cached answer
    asked: set[str] = field(default_factory=set)  # the candidates so far
    probed: set[str] = field(default_factory=set)  # the domains whose probe is in the work

    def add(self, candidates: list[Verdict], answers: Mapping[str, DomainAnswer]) -> dict[tuple[str, ...], list[str]]:
        """A part's work: its candidates grouped by MX hosts, not by domain (the domains one provider
        hosts, as every Google Workspace domain names the same MX hosts, share sessions, as they share
        the politeness limit), less what the mailbox cache knows; each domain's probe once a batch."""
        new = [v.email for v in candidates if v.email not in self.asked]
        self.asked.update(new)
        domains = {email: _domain(email) for email in new}
        self.domain_of.update(domains)
        fresh = dict.fromkeys(d for d in domains.values() if d not in self.catch_all and d not in self.probes)
        self.catch_all.update(CatchAllAnswer.objects.fresh_many(list(fresh)))
        for domain in fresh:
            if domain not in self.catch_all:
                probe = self.probes[domain] = probe_address(domain, self.probe_key, self.today)
                self.probe_domains[probe] = domain
        self.known.update(MailboxAnswer.objects.fresh_many(domains))
        work: dict[tuple[str, ...], list[str]] = {}
        probes: dict[str, str] = {}
        for email in new:
            domain = self.domain_of[email]
            recipients = work.setdefault(answers[domain].mx_hosts, [])
            if email not in self.known:
                recipients.append(email)
            if domain in self.probes and domain not in self.probed:
                probes[domain] = self.probes[domain]
                self.probed.add(domain)
        for domain, probe in probes.items():
            work[answers[domain].mx_hosts].append(probe)
        return {hosts: recipients for hosts, recipients in work.items() if recipients}


# The temporary reasons for `unknown`: the mail server may well answer later. A single or batch
# deep verification answered so is asked again on VERIFIER_SMTP_RETRY_SCHEDULE (docs/deep.md,
# "Unknowns resolve later"; verification/resolution.py).
TEMPORARY_SUB_STATUSES = frozenset({SubStatus.GREYLISTED, SubStatus.SMTP_UNREACHABLE})


def is_temporary(verdict: Verdict) -> bool:
    return verdict.validation_mode == ValidationMode.DEEP and verdict.sub_status in TEMPORARY_SUB_STATUSES


def is_asked_again(verdict: Verdict) -> bool:
    """A bulk job asks greylisted (4xx) rows again later (docs/deep.md)."""
    return verdict.sub_status is SubStatus.GREYLISTED


def deep_verify_many(
    raw_emails: Sequence[str],
    *,
    seconds: float | None = None,
    lookup: DomainLookup | None = None,
    egress_turn: int = 0,
    egresses: tuple[Egress, ...] | None = None,
    probe_day: date | None = None,
) -> list[Verdict]:
    """Deep verdicts in input order. Writes the shared caches, nothing else. `seconds`: the time
    the sessions may take (default: a single request's); a batch backs off longer after a 421.
    `lookup`: the DNS side (default the single request's; a bulk chunk passes its strict one).
    `egress_turn`: start this many egresses further along (asking again: from another egress).
    `egresses`: those the sessions may leave from (an account's probe region); None: every healthy one.
    `probe_day`: the day the addresses were first asked (default today); the catch-all probes are
    that day's, so asking again after midnight asks the probe greylisting has already seen."""
    emails = [normalise(raw) for raw in raw_emails]
    plan, lookup = _plan(probe_day), lookup or domain_lookup()
    fast: list[Verdict] = []
    early = _Early()  # what the idle window makes of the answers as they come

    def parts() -> Iterator[dict[tuple[str, ...], list[str]]]:
        for start in range(0, len(emails), PART_ROWS):
            verdicts, answers = _fast_verdicts(emails[start : start + PART_ROWS], lookup)
            fast.extend(verdicts)
            if work := plan.add([v for v in verdicts if v.sub_status not in _DECIDED_FAST], answers):
                yield work

    budget = seconds if seconds is not None else single_request_seconds()
    single = seconds is None
    idle = None if single else functools.partial(_while_asked, plan, fast, early)
    findings = _ask(parts(), plan, budget, single=single, egress_turn=egress_turn, egresses=egresses, idle=idle)
    if not plan.asked:
        return fast
    _remember(plan, findings, early)
    return [_verdict(v, plan, findings.answers, early) if v.email in plan.asked else v for v in fast]


def session_keys(raw_emails: Sequence[str], *, lookup: DomainLookup) -> list[str]:
    """Where each address's session would go, as a key: the MX addresses its domain's hosts lead to,
    merged as a batch's sessions merge them (host names that differ but lead to one address share a
    key); "" for an address the fast rules decide, which needs no session. A large deep job is
    ordered by these before it is cut into batches (jobs/grouping.py)."""
    fast, answers = _fast_verdicts([normalise(raw) for raw in raw_emails], lookup)
    hosts_of = {v.email: answers[_domain(v.email)].mx_hosts for v in fast if v.sub_status not in _DECIDED_FAST}
    groups = list(set(hosts_of.values()))
    resolve = host_resolver(resolver_config())

    async def addresses() -> list[tuple[str, ...]]:
        return await asyncio.gather(*(mx_addresses(resolve, hosts) for hosts in groups))

    keys = {hosts: " ".join(found or hosts) for hosts, found in zip(groups, asyncio.run(addresses()), strict=True)}
    return [keys[hosts_of[v.email]] if v.email in hosts_of else "" for v in fast]


def _fast_verdicts(emails: Sequence[str], lookup: DomainLookup) -> tuple[list[Verdict], dict[str, DomainAnswer]]:
    """The fast rules' verdicts of normalised addresses, which answer a deep request too (and say
    so), and the domains' answers."""
    answers: dict[str, DomainAnswer] = {}

    def remembered(
        domains: Collection[str], /, *, meanwhile: LookupMeanwhile | None = None
    ) -> Mapping[str, DomainAnswer]:
        answers.update(lookup(domains, meanwhile=meanwhile))  # kept: the MX hosts of the domains that need a session
        return answers

    fast = [verdict_replaced(v, validation_mode=ValidationMode.DEEP) for v in verify_many(emails, remembered)]
    return fast, answers


def _domain(email: str) -> str:
    parts = split(email)
    return parts[1] if parts else ""


def _plan(probe_day: date | None) -> _Plan:
    """A batch's plan before its parts (`_Plan.add` fills it)."""
    key = hashlib.sha256(("smtp-probe|" + settings.SECRET_KEY).encode()).digest()
    return _Plan(key, probe_day or timezone.now().date())


def _ask(
    parts: Iterable[dict[tuple[str, ...], list[str]]],
    plan: _Plan,
    seconds: float,
    *,
    single: bool,
    egress_turn: int = 0,
    egresses: tuple[Egress, ...] | None = None,
    idle: Callable[[list[tuple[str, Answer]]], None] | None = None,
) -> Findings:
    """The sessions for the parts' work, started once the first part has any; `idle`: the work done
    with the answers so far once every part is in (smtp_scheduling.py, "The idle window")."""
    found = iter(parts)
    first = next(found, None)
    if first is None:
        return Findings()
    healthy = egresses_healthy() if egresses is None else egresses
    turn = egress_turn % len(healthy) if healthy else 0
    prober = Prober(
        config=replace(smtp_config(), probes=plan.probe_domains.keys()),
        resolve=host_resolver(resolver_config()),
        allowed=may_contact,
        slots=politeness(),
        egresses=(*healthy[turn:], *healthy[:turn]),
    )
    if single:
        prober.backoff_tries = SINGLE_BACKOFF_TRIES
    findings = run_streamed(prober, chain([first], found), seconds, UNREACHABLE if single else OUT_OF_TIME, idle)
    metrics.smtp_sessions_counted(findings.sessions)
    egress_sessions_record(findings.egress_sessions, findings.egress_refused)
    metrics.smtp_work_cut(findings.cut)
    SmtpSessionCount.objects.record(findings.sessions)
    for outcome, address, reply in findings.refusals:
        level = logging.WARNING if outcome == "blocked" else logging.INFO
        logger.log(level, "SMTP session %s at %s: %s %s", outcome, address, reply.code or "-", reply.text)
    return findings


def politeness() -> Slots:
    """The count of sessions per egress and MX address: cluster-wide in Redis when REDIS_URL is set
    (machines may share an egress), else this machine's lock files (docs/deep.md)."""
    per_host = settings.VERIFIER_SMTP_MAX_CONNECTIONS_PER_HOST
    if settings.REDIS_URL:
        return RedisLeases(settings.REDIS_URL, per_host, ttl=settings.VERIFIER_SMTP_LEASE_SECONDS)
    return HostSlots(settings.VERIFIER_SMTP_LOCK_DIR, per_host)


# The dashboard lists this many, the most held back first; a scan reads at most SCANNED keys.
SHOWN, SCANNED = 20, 1000


@dataclass(frozen=True, slots=True)
class Throttle:
    egress: str
    address: str
    sessions: int  # at once, now
    spacing: float  # seconds between session starts


def throttled_addresses() -> list[Throttle]:
    """The MX addresses that limit our rate, for the staff dashboard: each (egress, address) whose
    allowance is held below the default (docs/deep.md, "Rate limits"), from Redis when REDIS_URL is
    set (every machine's), else from this machine's lock directory."""
    held = _from_redis() if settings.REDIS_URL else held_below(Path(settings.VERIFIER_SMTP_LOCK_DIR), time.time())
    found = [Throttle(*_split(of), allowance.sessions, round(allowance.interval, 1)) for of, allowance in held]
    return sorted(found, key=lambda throttle: (throttle.sessions, -throttle.spacing))[:SHOWN]


def _from_redis() -> list[tuple[str, Allowance]]:
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        keys = list(islice(client.scan_iter(match=f"{ALLOWANCE_PREFIX}*", count=SCANNED), SCANNED))
        pipe = client.pipeline(transaction=False)
        for key in keys:
            pipe.hgetall(key)
        stored = pipe.execute()
    finally:
        client.close()
    per_host = settings.VERIFIER_SMTP_MAX_CONNECTIONS_PER_HOST
    return [
        (key.decode().removeprefix(ALLOWANCE_PREFIX), allowance_from(fields, per_host))
        for key, fields in zip(keys, stored, strict=True)
        if fields
    ]


def _split(of: str) -> tuple[str, str]:
    egress, _, address = of.rpartition("|")
    return egress, address


@dataclass
class _Early:
    """What the idle window (smtp_scheduling.py) made of the answers as they came, which the batch's
    end reuses where its findings agree: the answers stored (the mailboxes', each probed domain's
    catch-all), and each row's verdict with the answer and probe it was built from."""

    rows: dict[str, Verdict] = field(default_factory=dict)  # the asked rows' fast verdicts, once it begins
    backlog: deque[tuple[str, Answer]] = field(default_factory=deque)  # come, not yet looked at
    answers: dict[str, Answer] = field(default_factory=dict)  # looked at
    parked: dict[str, list[str]] = field(default_factory=dict)  # domain -> rows answered, its probe not yet
    stored: dict[str, Answer] = field(default_factory=dict)
    catch_all: dict[str, bool] = field(default_factory=dict)
    verdicts: dict[str, tuple[Answer, Answer | None, Verdict]] = field(default_factory=dict)


def _while_asked(plan: _Plan, fast: list[Verdict], done: _Early, news: list[tuple[str, Answer]]) -> None:
    """The idle window's work while a batch's last sessions run, for about IDLE_SECONDS a call (the
    sessions wait meanwhile): the answers that came in stored, and the verdict of each row whose
    answer and probe are in built."""
    if not done.rows:
        done.rows = {verdict.email: verdict for verdict in fast if verdict.email in plan.asked}
    done.backlog.extend(news)
    until = time.monotonic() + IDLE_SECONDS
    while done.backlog and time.monotonic() < until:
        popped = [done.backlog.popleft() for _ in range(min(IDLE_ROWS, len(done.backlog)))]
        _looked_at(plan, {email: answer for email, answer in popped if done.answers.get(email) != answer}, done)


def _looked_at(plan: _Plan, taken: dict[str, Answer], done: _Early) -> None:
    done.answers.update(taken)
    try:
        _store(plan, taken, done)
    except Exception:  # as a deferred write's (lib/deferred.py): the end stores what is missing
        logger.exception("storing a deep batch's answers while its sessions ran failed")
    for email in taken:
        if (domain := plan.probe_domains.get(email)) is not None:
            for row in done.parked.pop(domain, []):
                _early_verdict(row, plan, done)
        elif email in done.rows:
            domain = plan.domain_of[email]
            if domain in plan.probed and plan.probes[domain] not in done.answers:
                done.parked.setdefault(domain, []).append(email)
            else:
                _early_verdict(email, plan, done)


def _early_verdict(email: str, plan: _Plan, early: _Early) -> None:
    answer, probe = _inputs(email, plan, early.answers)
    if answer is not None:
        early.verdicts[email] = (answer, probe, _built(early.rows[email], plan, answer, probe))


def _remember(plan: _Plan, findings: Findings, early: _Early) -> None:
    """Keep the answers for whoever asks next, once the batch's job is answered (lib/deferred.py):
    those the idle window has not stored as they are."""
    later(functools.partial(_store, plan, findings.answers, early))


def _store(plan: _Plan, answers: Mapping[str, Answer], early: _Early) -> None:
    """The mailboxes' answers and the probed domains' catch-all answers among `answers`, but those
    already stored as they are."""
    mailboxes: dict[str, Answer] = {}
    domains: dict[str, bool] = {}
    for email, answer in answers.items():
        if (domain := plan.probe_domains.get(email)) is None:
            if early.stored.get(email) != answer:
                mailboxes[email] = answer
        elif domain in plan.probed and (accepts := catch_all_of(answer)) is not None:
            domains[domain] = accepts
    domains = {domain: accepts for domain, accepts in domains.items() if early.catch_all.get(domain) != accepts}
    MailboxAnswer.objects.store_many(mailboxes)
    early.stored.update(mailboxes)
    CatchAllAnswer.objects.store_many(domains)
    early.catch_all.update(domains)


def _inputs(email: str, plan: _Plan, answers: Mapping[str, Answer]) -> tuple[Answer | None, Answer | None]:
    """A row's answer (the cache's, else the sessions') and its domain's probe's, when asked now."""
    domain = plan.domain_of[email]
    probe = answers.get(plan.probes[domain]) if domain in plan.probed else None
    return plan.known.get(email) or answers.get(email), probe


def _verdict(fast: Verdict, plan: _Plan, answers: Mapping[str, Answer], early: _Early) -> Verdict:
    """The row's verdict: the idle window's where it was built from the same answers, else built now."""
    answer, probe = _inputs(fast.email, plan, answers)
    assert answer is not None  # every asked row is answered at the end (Prober.findings_for)
    made = early.verdicts.get(fast.email)
    if made is not None and made[0] == answer and made[1] == probe:
        return made[2]
    return _built(fast, plan, answer, probe)


def _built(fast: Verdict, plan: _Plan, answer: Answer, probe: Answer | None) -> Verdict:
    domain = plan.domain_of[fast.email]
    catch_all = plan.catch_all[domain] if domain in plan.catch_all else catch_all_of(probe)
    return deep_verdict(fast, answer, probe, catch_all)
