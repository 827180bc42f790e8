"""What reported delivery outcomes do to a verdict (docs/feedback.md): plain rules, no storage.

The store (the `feedback` app) says what was reported; these functions say what it means. The bench
(`python -m bench --only feedback`) runs the same functions on a synthetic world.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from verification.engine.verdict import Deliverability, Feedback, Status, SubStatus, Verdict

# Sub-statuses a delivery settles: the server would not say whether the mailbox exists, the delivery did.
SETTLED_BY_DELIVERY = frozenset({SubStatus.CATCH_ALL, SubStatus.SMTP_UNREACHABLE, SubStatus.GREYLISTED})
# How many outcomes the prior is worth: below this many, the domain's own rate counts for less than half.
PRIOR_STRENGTH = 10.0


@dataclass(frozen=True, slots=True)
class Evidence:
    """What counts for one address as one account asks: its own newest hard bounce and delivery (90 days),
    and a hard bounce that counts for every account (two independent reporters, 30 days)."""

    bounced_at: datetime | None = None
    delivered_at: datetime | None = None
    shared_bounce_at: datetime | None = None


def feedback_applied(verdict: Verdict, evidence: Evidence | None) -> Verdict:
    """The verdict after the reports: a hard bounce (the account's own, or a shared one) not followed by
    the account's own delivery makes it invalid; a delivery not followed by a hard bounce settles a
    catch-all, unreachable or greylisted address as valid."""
    if evidence is None:
        return verdict
    bounce = _newest(evidence.bounced_at, evidence.shared_bounce_at)
    delivered = evidence.delivered_at
    if bounce is not None and (delivered is None or delivered < bounce):
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
