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
# One account's outcomes for one domain count at most this many (distinct addresses each way): a flood
# of fake reports moves a domain's estimate no further than this many honest ones would.
PER_ACCOUNT_CAP = 20
DELIVERED, HARD_BOUNCE = "delivered", "hard_bounce"

# (address, reporting account, outcome, when), deliveries and hard bounces of the last OWN_EFFECT.
Row = tuple[str, int, str, datetime]
Members = Callable[[Collection[int]], Mapping[int, frozenset[int]]]


@dataclass(frozen=True, slots=True)
class Evidence:
    """What counts for one address as one account asks: its own newest hard bounce and delivery (90 days),
    and a hard bounce that counts for every account (two independent reporters, 30 days)."""

    bounced_at: datetime | None = None
    delivered_at: datetime | None = None
    shared_bounce_at: datetime | None = None


def evidence_from(rows: Iterable[Row], *, account_id: int, now: datetime, members: Members) -> dict[str, Evidence]:
    """What counts for each address as `account_id` asks: its own newest hard bounce and delivery, and
    a hard bounce at least two accounts with no member in common reported within SHARED_EFFECT."""
    own: dict[str, dict[str, datetime]] = defaultdict(dict)
    bouncers: dict[str, dict[int, datetime]] = defaultdict(dict)
    for email, reporter, outcome, at in rows:
        if reporter == account_id and at >= now - OWN_EFFECT:
            own[email][outcome] = max(at, own[email].get(outcome, at))
        if outcome == HARD_BOUNCE and at >= now - SHARED_EFFECT:
            bouncers[email][reporter] = max(at, bouncers[email].get(reporter, at))
    shared = _shared_bounces(bouncers, members)
    return {
        email: Evidence(
            bounced_at=own[email].get(HARD_BOUNCE),
            delivered_at=own[email].get(DELIVERED),
            shared_bounce_at=shared.get(email),
        )
        for email in set(own) | set(shared)
    }


def _shared_bounces(bouncers: dict[str, dict[int, datetime]], members: Members) -> dict[str, datetime]:
    candidates = {email: by for email, by in bouncers.items() if len(by) >= 2}
    if not candidates:
        return {}
    found = members({account for by in candidates.values() for account in by})
    return {email: max(by.values()) for email, by in candidates.items() if independent_pair(by.keys(), found)}


def domain_counts(rows: Iterable[tuple[str, int, str, int]], cap: int = PER_ACCOUNT_CAP) -> dict[str, tuple[int, int]]:
    """(delivered, hard-bounced) addresses per domain from (domain, account, outcome, addresses) rows,
    each account's share capped."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for domain, _, outcome, addresses in rows:
        counts[domain][0 if outcome == DELIVERED else 1] += min(addresses, cap)
    return {domain: (good, bad) for domain, (good, bad) in counts.items()}


def feedback_applied(verdict: Verdict, evidence: Evidence | None) -> Verdict:
    """The verdict after the reports: a hard bounce (the account's own, or a shared one) not followed by
    the account's own delivery makes it invalid; a delivery not followed by a hard bounce settles a
    catch-all, unreachable or greylisted address as valid."""
    if evidence is None:
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


def estimate(delivered: int, bounced: int, prior_rate: float, prior_strength: float = PRIOR_STRENGTH) -> Deliverability:
    """The posterior mean of a beta-binomial: the domain's delivered share, shrunk toward `prior_rate`
    (the global catch-all rate) with the weight of `prior_strength` outcomes."""
    basis = delivered + bounced
    value = (delivered + prior_strength * prior_rate) / (basis + prior_strength)
    return Deliverability(round(value, 3), basis)


def pooled_rate(counts: Iterable[tuple[int, int]], default: float, prior_strength: float = PRIOR_STRENGTH) -> float:
    """The global catch-all rate: every domain's (delivered, bounced) pooled, itself shrunk toward
    `default` while there are few."""
    delivered = bounced = 0
    for good, bad in counts:
        delivered, bounced = delivered + good, bounced + bad
    return (delivered + prior_strength * default) / (delivered + bounced + prior_strength)


def independent_pair(reporters: Collection[int], members: Mapping[int, frozenset[int]]) -> bool:
    """Whether two of the reporting accounts have no member in common: one customer (or one person in
    several accounts) alone cannot make an address invalid for everyone."""
    accounts = sorted(reporters)
    return any(
        not (members.get(first, frozenset()) & members.get(second, frozenset()))
        for index, first in enumerate(accounts)
        for second in accounts[index + 1 :]
    )
