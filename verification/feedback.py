"""Reported outcomes applied to verdicts (docs/feedback.md): the store's evidence, the engine's rules.

Applied on every answer, after the verdict cache: the cache keeps what the engine said, so a report
made after a verdict was cached changes the next answer, not one a day later.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime

from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from accounts.models import Membership
from feedback.models import OWN_EFFECT, SHARED_EFFECT, FeedbackEvent, Outcome
from verification.engine import SubStatus, Verdict
from verification.engine.feedback import (
    Evidence,
    deliverability_applied,
    estimate,
    feedback_applied,
    independent_pair,
    pooled_rate,
)
from verification.engine.verdict import Deliverability
from verification.models import CatchAllAnswer

# One account's outcomes for one domain count at most this many (distinct addresses each way): a flood
# of fake reports moves the estimate no further than this many honest ones would.
PER_ACCOUNT_CAP = 20
_LOOKUP_BATCH = 500


def verdicts_with_feedback(*, account_id: int, verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts as this account should see them: its own reports and shared hard bounces applied,
    and every catch-all verdict with its deliverability estimate."""
    evidence = _evidence(account_id, [v.email for v in verdicts if v.checks.syntax_valid])
    judged = [feedback_applied(verdict, evidence.get(verdict.email)) for verdict in verdicts]
    catch_all = {_domain(v.email) for v in judged if v.sub_status is SubStatus.CATCH_ALL}
    if not catch_all:
        return judged
    estimates = domain_estimates(catch_all)
    return [deliverability_applied(v, estimates.get(_domain(v.email))) for v in judged]


def _domain(email: str) -> str:
    return email.rsplit("@", 1)[-1]


def _evidence(account_id: int, emails: list[str]) -> dict[str, Evidence]:
    now = timezone.now()
    own: dict[str, dict[str, datetime]] = defaultdict(dict)
    bouncers: dict[str, dict[int, datetime]] = defaultdict(dict)
    for email, reporter, outcome, at in _rows(emails, now - OWN_EFFECT):
        if reporter == account_id:
            own[email][outcome] = max(at, own[email].get(outcome, at))
        elif outcome == Outcome.HARD_BOUNCE and at >= now - SHARED_EFFECT:
            bouncers[email][reporter] = max(at, bouncers[email].get(reporter, at))
    for email, newest in own.items():
        if Outcome.HARD_BOUNCE in newest and newest[Outcome.HARD_BOUNCE] >= now - SHARED_EFFECT:
            bouncers[email][account_id] = newest[Outcome.HARD_BOUNCE]
    shared = _shared_bounces(bouncers)
    return {
        email: Evidence(
            bounced_at=own[email].get(Outcome.HARD_BOUNCE),
            delivered_at=own[email].get(Outcome.DELIVERED),
            shared_bounce_at=shared.get(email),
        )
        for email in set(own) | set(shared)
    }


def _rows(emails: list[str], since: datetime) -> Iterator[tuple[str, int, str, datetime]]:
    distinct = sorted(set(emails))
    for start in range(0, len(distinct), _LOOKUP_BATCH):
        chunk = distinct[start : start + _LOOKUP_BATCH]
        yield from FeedbackEvent.objects.deciding(chunk, since).values_list(
            "email", "account_id", "outcome", "occurred_at"
        )


def _shared_bounces(bouncers: dict[str, dict[int, datetime]]) -> dict[str, datetime]:
    """The addresses hard-bounced for at least two accounts with no member in common (30 days): the
    newest of those bounces. One account alone, or accounts sharing a person, never suffices."""
    candidates = {email: by for email, by in bouncers.items() if len(by) >= 2}
    if not candidates:
        return {}
    accounts = {account for by in candidates.values() for account in by}
    members = _members(accounts)
    return {email: max(by.values()) for email, by in candidates.items() if independent_pair(by.keys(), members)}


def _members(accounts: Collection[int]) -> dict[int, frozenset[int]]:
    found: dict[int, set[int]] = defaultdict(set)
    for account, user in Membership.objects.filter(account_id__in=list(accounts)).values_list("account_id", "user_id"):
        found[account].add(user)
    return {account: frozenset(users) for account, users in found.items()}


def domain_estimates(domains: Collection[str]) -> dict[str, Deliverability]:
    """Each catch-all domain's deliverability: its delivered and hard-bounced addresses as reported by
    every account (each account's share capped), shrunk toward the global catch-all rate."""
    counts = _domain_counts(list(domains))
    prior = global_catch_all_rate()
    return {domain: estimate(*counts.get(domain, (0, 0)), prior) for domain in domains}


def _domain_counts(domains: list[str]) -> dict[str, tuple[int, int]]:
    rows = (
        FeedbackEvent.objects.filter(domain__in=domains, outcome__in=[Outcome.DELIVERED, Outcome.HARD_BOUNCE])
        .values_list("domain", "account_id", "outcome")
        .annotate(addresses=Count("email", distinct=True))
        .order_by()
    )
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for domain, _, outcome, addresses in rows:
        counts[domain][0 if outcome == Outcome.DELIVERED else 1] += min(addresses, PER_ACCOUNT_CAP)
    return {domain: (good, bad) for domain, (good, bad) in counts.items()}


def global_catch_all_rate() -> float:
    """The delivered share of every reported outcome on domains known to be catch-all, shrunk toward the
    operator's default (FEEDBACK_CATCH_ALL_PRIOR) while there are few."""
    known = CatchAllAnswer.objects.filter(accepts_any=True).values_list("domain", flat=True)
    counts = _domain_counts(list(known[:10_000]))
    return pooled_rate(counts.values(), settings.FEEDBACK_CATCH_ALL_PRIOR)
