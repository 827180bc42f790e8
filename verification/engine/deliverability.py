"""What reported delivery outcomes do to a verdict (docs/feedback.md): plain rules, no storage.

The store (the `feedback` app) says what was reported; these functions say what it means. The bench
(`python -m bench --only feedback`) runs the same functions on a synthetic world.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from verification.engine.verdict import Deliverability, Feedback, Status, SubStatus, Verdict

# Sub-statuses a delivery settles: the server would not say whether the mailbox exists, the delivery did.
SETTLED_BY_DELIVERY = frozenset({SubStatus.CATCH_ALL, SubStatus.SMTP_UNREACHABLE, SubStatus.GREYLISTED})
# How many outcomes the prior is worth: below this many, the domain's own rate counts for less than half.
PRIOR_STRENGTH = 10.0
# A report counts this long for the reporting account's verdicts; a hard bounce this long for everyone's.
OWN_EFFECT = timedelta(days=90)
SHARED_EFFECT = timedelta(days=30)
# One reporter's outcomes for one domain count at most this many (distinct addresses each way) for its
# own estimate, and weigh at most REPORTER_WEIGHT outcomes in anyone else's; in the global catch-all rate
# (the prior), its outcomes on all domains together weigh at most GLOBAL_WEIGHT. Fixed weights, not shares
# of the rest: a flood then neither buys weight nor lifts anyone else's. So one reporter alone moves
# another account's estimate of a domain by at most REPORTER_WEIGHT / (PRIOR_STRENGTH + REPORTER_WEIGHT)
# plus GLOBAL_WEIGHT / (PRIOR_STRENGTH + GLOBAL_WEIGHT), under 0.05, whatever it floods and on however
# many domains (docs/feedback.md, "What bounds each abuse"). A reporter is an account, or several linked
# by a shared member.
PER_ACCOUNT_CAP = 20
REPORTER_WEIGHT = 0.4
GLOBAL_WEIGHT = 0.1
DELIVERED, HARD_BOUNCE = "delivered", "hard_bounce"

# (address, reporting account, outcome, when, authenticated), deliveries and hard bounces of the last
# OWN_EFFECT; `authenticated`: it came as a sending service's event whose signature or credentials held.
Row = tuple[str, int, str, datetime, bool]
Members = Callable[[Collection[int]], Mapping[int, frozenset[int]]]
# Which of these accounts have paid at least once (docs/feedback.md, "Across accounts").
Paid = Callable[[Collection[int]], Collection[int]]


@dataclass(frozen=True, slots=True)
class Evidence:
    """What counts for one address as one account asks: its own newest hard bounce and delivery (90 days),
    and a hard bounce that counts for every account (two independent reporters, 30 days)."""

    bounced_at: datetime | None = None
    delivered_at: datetime | None = None
    shared_bounce_at: datetime | None = None


def evidence_from(
    rows: Iterable[Row], *, account_id: int, now: datetime, members: Members, paid: Paid
) -> dict[str, Evidence]:
    """What counts for each address as `account_id` asks: its own newest hard bounce and delivery, and
    a hard bounce at least two accounts with no member in common reported within SHARED_EFFECT, each
    of them vouched for (`_vouched`)."""
    own: dict[str, dict[str, datetime]] = defaultdict(dict)
    bouncers: dict[str, dict[int, tuple[datetime, bool]]] = defaultdict(dict)
    for email, reporter, outcome, at, authenticated in rows:
        if reporter == account_id and at >= now - OWN_EFFECT:
            own[email][outcome] = max(at, own[email].get(outcome, at))
        if outcome == HARD_BOUNCE and at >= now - SHARED_EFFECT:
            seen_at, seen_authenticated = bouncers[email].get(reporter, (at, authenticated))
            bouncers[email][reporter] = (max(at, seen_at), authenticated or seen_authenticated)
    shared = _shared_bounces(_vouched(bouncers, paid), members)
    return {
        email: Evidence(
            bounced_at=own[email].get(HARD_BOUNCE),
            delivered_at=own[email].get(DELIVERED),
            shared_bounce_at=shared.get(email),
        )
        for email in set(own) | set(shared)
    }


def _vouched(bouncers: dict[str, dict[int, tuple[datetime, bool]]], paid: Paid) -> dict[str, dict[int, datetime]]:
    """Only reporters a sign-up cannot make count across accounts: an account that has paid, or one
    whose report came as an authenticated event of its sending service (docs/feedback.md)."""
    candidates = {email: by for email, by in bouncers.items() if len(by) >= 2}
    unproven = {reporter for by in candidates.values() for reporter, (_, proven) in by.items() if not proven}
    paying = set(paid(unproven)) if unproven else set()
    return {
        email: {reporter: at for reporter, (at, proven) in by.items() if proven or reporter in paying}
        for email, by in candidates.items()
    }


def _shared_bounces(bouncers: dict[str, dict[int, datetime]], members: Members) -> dict[str, datetime]:
    candidates = {email: by for email, by in bouncers.items() if len(by) >= 2}
    if not candidates:
        return {}
    found = members({account for by in candidates.values() for account in by})
    return {email: max(by.values()) for email, by in candidates.items() if independent_pair(by.keys(), found)}


def domain_counts(
    rows: Iterable[tuple[str, int, str, int]],
    *,
    asker: int | None = None,
    reporter_of: Mapping[int, int] | None = None,
) -> dict[str, tuple[float, float]]:
    """(delivered, hard-bounced) addresses per domain from (domain, account, outcome, addresses) rows, as
    `asker` should see them (None: as an account that reported nothing there does): its own reporter's at
    most PER_ACCOUNT_CAP each way, every other reporter (`reporter_of`: account -> the reporter it belongs
    to) scaled to weigh at most REPORTER_WEIGHT."""
    own = None if asker is None else (reporter_of or {}).get(asker, asker)
    return {
        domain: _summed(_limited(reporters, REPORTER_WEIGHT, own).values())
        for domain, reporters in _by_reporter(rows, reporter_of or {}).items()
    }


def global_counts(
    rows: Iterable[tuple[str, int, str, int]], *, reporter_of: Mapping[int, int] | None = None
) -> list[tuple[float, float]]:
    """Each reporter's (delivered, hard-bounced) weight for the global catch-all rate: its outcomes on
    every domain, scaled to weigh at most GLOBAL_WEIGHT, so many domains buy no more weight than one."""
    totals: dict[int, tuple[float, float]] = defaultdict(lambda: (0.0, 0.0))
    for reporters in _by_reporter(rows, reporter_of or {}).values():
        for reporter, weights in reporters.items():
            totals[reporter] = _summed([totals[reporter], weights])
    return list(_limited(totals, GLOBAL_WEIGHT, None).values())


def _by_reporter(
    rows: Iterable[tuple[str, int, str, int]], reporter_of: Mapping[int, int]
) -> dict[str, dict[int, tuple[float, float]]]:
    found: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for domain, account, outcome, addresses in rows:
        found[domain][reporter_of.get(account, account)][0 if outcome == DELIVERED else 1] += addresses
    return {
        domain: {
            reporter: (min(good, PER_ACCOUNT_CAP), min(bad, PER_ACCOUNT_CAP)) for reporter, (good, bad) in by.items()
        }
        for domain, by in found.items()
    }


def _limited(
    weights: Mapping[int, tuple[float, float]], limit: float, own: int | None
) -> dict[int, tuple[float, float]]:
    """Each reporter's (delivered, bounced) scaled down to weigh at most `limit` together; `own` in full."""
    scaled = {}
    for reporter, (good, bad) in weights.items():
        factor = 1.0 if reporter == own or good + bad <= limit else limit / (good + bad)
        scaled[reporter] = (good * factor, bad * factor)
    return scaled


def _summed(pairs: Iterable[tuple[float, float]]) -> tuple[float, float]:
    delivered = bounced = 0.0
    for good, bad in pairs:
        delivered, bounced = delivered + good, bounced + bad
    return delivered, bounced


def feedback_applied(verdict: Verdict, evidence: Evidence | None) -> Verdict:
    """The verdict after the reports: a hard bounce (the account's own, or a shared one) not followed by
    the account's own delivery makes it invalid; a delivery not followed by a hard bounce settles a
    catch-all, unreachable or greylisted address as valid. A row left unjudged because its person
    objected stays as it is: reports say nothing of it to anyone."""
    if evidence is None or verdict.sub_status is SubStatus.ADDRESS_OBJECTED:
        return verdict
    bounce = _newest(evidence.bounced_at, evidence.shared_bounce_at)
    delivered = evidence.delivered_at
    if bounce is not None and (
        delivered is None or delivered <= bounce
    ):  # a tie: the bounce (only a later delivery wins)
        return _bounced(verdict, bounce)
    if delivered is not None and (verdict.status is Status.VALID or verdict.sub_status in SETTLED_BY_DELIVERY):
        return _delivered(verdict, delivered)
    return verdict


def _newest(*moments: datetime | None) -> datetime | None:
    present = [moment for moment in moments if moment is not None]
    return max(present) if present else None


def _bounced(verdict: Verdict, at: datetime) -> Verdict:
    return replace(
        verdict,
        status=Status.INVALID,
        sub_status=SubStatus.MAILBOX_NOT_FOUND,
        is_valid=False,
        confidence="high",
        score=0,
        checks=replace(verdict.checks, smtp_valid=False),
        feedback=Feedback("hard_bounce", at),
        deliverability=None,
    )


def _delivered(verdict: Verdict, at: datetime) -> Verdict:
    if verdict.status is Status.VALID:
        return replace(verdict, feedback=Feedback("delivered", at))
    return replace(
        verdict,
        status=Status.VALID,
        sub_status=None,
        is_valid=True,
        confidence="medium",
        score=max(verdict.score, 80),
        checks=replace(verdict.checks, smtp_valid=True),
        feedback=Feedback("delivered", at),
        deliverability=None,
    )


def deliverability_applied(verdict: Verdict, deliverability: Deliverability | None) -> Verdict:
    """A catch-all verdict carries the estimate, and its score follows it."""
    if deliverability is None or verdict.sub_status is not SubStatus.CATCH_ALL:
        return verdict
    return replace(verdict, deliverability=deliverability, score=round(100 * deliverability.estimate))


def estimate(
    delivered: float, bounced: float, prior_rate: float, prior_strength: float = PRIOR_STRENGTH
) -> Deliverability:
    """The posterior mean of a beta-binomial: the domain's delivered share, shrunk toward `prior_rate`
    (the global catch-all rate) with the weight of `prior_strength` outcomes. `basis`: the outcomes'
    weight after the caps, rounded."""
    basis = delivered + bounced
    value = (delivered + prior_strength * prior_rate) / (basis + prior_strength)
    return Deliverability(round(value, 3), round(basis))


def pooled_rate(counts: Iterable[tuple[float, float]], default: float, prior_strength: float = PRIOR_STRENGTH) -> float:
    """The global catch-all rate: every domain's (delivered, bounced) pooled, itself shrunk toward
    `default` while there are few."""
    delivered = bounced = 0.0
    for good, bad in counts:
        delivered, bounced = delivered + good, bounced + bad
    return (delivered + prior_strength * default) / (delivered + bounced + prior_strength)


def reporters_of(members: Mapping[int, frozenset[int]]) -> dict[int, int]:
    """Each account's reporter: accounts linked by a shared member, directly or through others, are one
    (named by the lowest account id), so one person's several accounts weigh as one in a domain's estimate."""
    parent = {account: account for account in members}

    def root(account: int) -> int:
        while parent[account] != account:
            account = parent[account]
        return account

    first_account_of: dict[int, int] = {}
    for account in sorted(members):
        for user in members[account]:
            if user not in first_account_of:
                first_account_of[user] = account
                continue
            low, high = sorted((root(account), root(first_account_of[user])))
            parent[high] = low
    return {account: root(account) for account in members}


def independent_pair(reporters: Collection[int], members: Mapping[int, frozenset[int]]) -> bool:
    """Whether two of the reporting accounts have no member in common: one customer (or one person in
    several accounts) alone cannot make an address invalid for everyone."""
    accounts = sorted(reporters)
    return any(
        not (members.get(first, frozenset()) & members.get(second, frozenset()))
        for index, first in enumerate(accounts)
        for second in accounts[index + 1 :]
    )
