"""Reported outcomes applied to verdicts (docs/feedback.md): the store's evidence, the engine's rules.

Applied on every answer, after the verdict cache: the cache keeps what the engine said, so a report
made after a verdict was cached changes the next answer, not one a day later.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, QuerySet
from django.utils import timezone

from accounts.models import Account, Membership
from accounts.plans import SIGNUP_PLAN
from billing.models import Payment
from feedback.models import FeedbackEvent, Outcome
from verification.engine import SubStatus, Verdict
from verification.engine.deliverability import (
    OWN_EFFECT,
    Row,
    deliverability_applied,
    domain_counts,
    estimate,
    evidence_from,
    feedback_applied,
    global_counts,
    pooled_rate,
    reporters_of,
)
from verification.engine.verdict import Deliverability
from verification.models import CatchAllAnswer

# How long a refreshed global rate is believed: ten refreshes' worth, so a stopped worker shows as a
# recomputation in an answer, never as a rate frozen for good.
GLOBAL_RATE_SECONDS = 600


def verdicts_with_feedback(*, account_id: int, verdicts: Sequence[Verdict]) -> list[Verdict]:
    """The verdicts as this account should see them: its own reports and shared hard bounces applied,
    and every catch-all verdict with its deliverability estimate."""
    emails = [v.email for v in verdicts if v.checks.syntax_valid]
    now = timezone.now()
    rows = _rows(emails, now - OWN_EFFECT)
    evidence = evidence_from(rows, account_id=account_id, now=now, members=_members, paid=accounts_paid)
    judged = [feedback_applied(verdict, evidence.get(verdict.email)) for verdict in verdicts]
    catch_all = {_domain(v.email) for v in judged if v.sub_status is SubStatus.CATCH_ALL}
    if not catch_all:
        return judged
    estimates = domain_estimates(catch_all, account_id=account_id)
    return [deliverability_applied(v, estimates.get(_domain(v.email))) for v in judged]


def _domain(email: str) -> str:
    return email.rsplit("@", 1)[-1]


def _rows(emails: list[str], since: datetime) -> Iterator[Row]:
    return FeedbackEvent.objects.deciding(sorted(set(emails)), since)


def _members(accounts: Collection[int]) -> dict[int, frozenset[int]]:
    found: dict[int, set[int]] = defaultdict(set)
    for account, user in Membership.objects.filter(account_id__in=list(accounts)).values_list("account_id", "user_id"):
        found[account].add(user)
    return {account: frozenset(users) for account, users in found.items()}


def accounts_paid(accounts: Collection[int]) -> set[int]:
    """The accounts among these that have paid at least once (a payment Stripe confirmed), or whose plan
    is one only a payment or staff can set: a sign-up is neither (docs/feedback.md, "Across accounts")."""
    ids = list(accounts)
    payments = Payment.objects.filter(account_id__in=ids, status=Payment.Status.SUCCEEDED)
    paying = set(payments.values_list("account_id", flat=True))
    on_plans = Account.objects.filter(pk__in=ids).exclude(plan__code=SIGNUP_PLAN).values_list("pk", flat=True)
    return paying | set(on_plans)


def domain_estimates(domains: Collection[str], *, account_id: int | None = None) -> dict[str, Deliverability]:
    """Each catch-all domain's deliverability as `account_id` should see it: the delivered and hard-bounced
    addresses every account reported (each reporter's weight capped, the asker's own in full), shrunk
    toward the global catch-all rate."""
    rows = _rows_by_domain(list(domains))
    counts = domain_counts(rows, asker=account_id, reporter_of=_reporters(rows))
    prior = global_catch_all_rate()
    return {domain: estimate(*counts.get(domain, (0, 0)), prior) for domain in domains}


def _rows_by_domain(domains: Collection[str] | QuerySet[Any, Any]) -> list[tuple[str, int, str, int]]:
    """(domain, account, outcome, distinct addresses): the deliveries and hard bounces reported there."""
    return list(
        FeedbackEvent.objects.filter(domain__in=domains, outcome__in=[Outcome.DELIVERED, Outcome.HARD_BOUNCE])
        .values_list("domain", "account_id", "outcome")
        .annotate(addresses=Count("address_key", distinct=True))
        .order_by()
    )


def global_catch_all_rate() -> float:
    """The delivered share of every reported outcome on domains known to be catch-all (as an account that
    reported none sees them, each reporter's weight capped), shrunk toward the operator's default
    (FEEDBACK_CATCH_ALL_PRIOR) while there are few.

    It reads every such report (about a second with 200,000 of them), so answers never compute it:
    they read the value `global_catch_all_rate_refresh` keeps in the cache, every minute, on the
    workers. Only a cold cache (a fresh deployment, before the first refresh) computes it in the
    answer. One report moves it by at most its reporter's capped weight, so a minute's delay changes
    nothing a customer could see."""
    rate = cache.get(_global_rate_key())
    return rate if isinstance(rate, float) else global_catch_all_rate_refresh()


def _global_rate_key() -> str:
    return f"feedback:global-catch-all-rate:{settings.FEEDBACK_CATCH_ALL_PRIOR}"


def global_catch_all_rate_refresh() -> float:
    """Computes the global rate and keeps it (the per-minute schedule of verification/queue.py)."""
    rate = _global_catch_all_rate()
    cache.set(_global_rate_key(), rate, GLOBAL_RATE_SECONDS)
    return rate


def _global_catch_all_rate() -> float:
    rows = _rows_by_domain(CatchAllAnswer.objects.filter(accepts_any=True).values("domain"))  # one query
    counts = global_counts(rows, reporter_of=_reporters(rows))
    return pooled_rate(counts, settings.FEEDBACK_CATCH_ALL_PRIOR)


def _reporters(rows: list[tuple[str, int, str, int]]) -> dict[int, int]:
    accounts = {account for _, account, _, _ in rows}
    return reporters_of(_members(accounts)) if accounts else {}
