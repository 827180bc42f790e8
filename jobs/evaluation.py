"""A list's quality, estimated for free before anyone pays to clean it (docs/bulk.md, "Evaluate a list").

A random sample of the list's unique addresses is judged in fast mode and only the shares of each
status leave: never which address got which verdict. The sample is at most LIST_EVALUATION_SAMPLE
addresses and at most half the list, drawn with a seed taken from the list itself, so asking again
about the same list draws the same sample (and is answered from the stored estimate). An account
has at most LIST_EVALUATIONS_PER_DAY new lists evaluated in any 24 hours; a list of fewer than
LIST_EVALUATION_MIN_ADDRESSES addresses is not estimated (it is cheaper to verify than to guess).
No credit moves.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import TypedDict, cast

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import Account
from jobs.models import ListEvaluation
from verification.engine import Status, Verdict, verify_many
from verification.engine.core import with_second_chance
from verification.engine.sandbox import sandbox_verdicts
from verification.resolver import domain_lookup

# A 95% confidence interval: the margin of error is this many standard errors.
CONFIDENCE_LEVEL = 0.95
Z_95 = 1.96
WINDOW = timedelta(hours=24)
# Kept a little past the window, then pruned (lib/prune.py reads `expires_at`).
LIFETIME = timedelta(hours=48)


class Estimate(TypedDict):
    sample_size: int
    population: int
    shares: dict[str, float]
    margin_of_error: float
    confidence_level: float


class Withheld(StrEnum):
    TOO_FEW_ADDRESSES = "too_few_addresses"
    DAILY_LIMIT_REACHED = "daily_limit_reached"


@dataclass(frozen=True)
class Evaluation:
    """An estimate, or why there is none; and how many new lists the account may still evaluate today."""

    estimate: Estimate | None
    withheld: Withheld | None
    evaluations_left: int


def list_evaluate(*, account: Account, addresses: Sequence[str], sandbox: bool = False) -> Evaluation:
    """The estimate of a list of unique (normalised) addresses; a test key's is judged in the sandbox."""
    if len(addresses) < settings.LIST_EVALUATION_MIN_ADDRESSES:
        return Evaluation(None, Withheld.TOO_FEW_ADDRESSES, evaluations_left(account))
    fingerprint = list_fingerprint(addresses)
    earlier = _recent(account).filter(fingerprint=fingerprint, estimate__isnull=False).order_by("-created_at").first()
    if earlier is not None:
        return Evaluation(cast(Estimate, earlier.estimate), None, evaluations_left(account))
    claim = _evaluation_claim(account=account, fingerprint=fingerprint)
    if claim is None:
        return Evaluation(None, Withheld.DAILY_LIMIT_REACHED, 0)
    try:
        estimate = estimate_of(_verdicts(sample_of(addresses, fingerprint), sandbox=sandbox), population=len(addresses))
    except BaseException:
        claim.delete()  # nothing was estimated: the evaluation is not spent
        raise
    claim.estimate = estimate
    claim.save(update_fields=["estimate"])
    return Evaluation(estimate, None, evaluations_left(account))


def evaluations_left(account: Account) -> int:
    return max(settings.LIST_EVALUATIONS_PER_DAY - _recent(account).count(), 0)


def _recent(account: Account) -> QuerySet[ListEvaluation]:
    return ListEvaluation.objects.filter(account=account, created_at__gt=timezone.now() - WINDOW)


def _evaluation_claim(*, account: Account, fingerprint: str) -> ListEvaluation | None:
    """Take one of today's evaluations, or say there is none left. The account's row is locked so
    that two uploads at once cannot both take the last one."""
    with transaction.atomic():
        Account.objects.select_for_update().filter(pk=account.pk).first()
        if evaluations_left(account) <= 0:
            return None
        now = timezone.now()
        return ListEvaluation.objects.create(
            account=account, fingerprint=fingerprint, created_at=now, expires_at=now + LIFETIME
        )


def list_fingerprint(addresses: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(sorted(addresses)).encode()).hexdigest()


def sample_size_for(population: int) -> int:
    return min(settings.LIST_EVALUATION_SAMPLE, population // 2)


def sample_of(addresses: Sequence[str], fingerprint: str) -> list[str]:
    """A random sample, the same for the same list (seeded by its fingerprint)."""
    return random.Random(fingerprint).sample(list(addresses), sample_size_for(len(addresses)))


def _verdicts(sample: list[str], *, sandbox: bool) -> list[Verdict]:
    # As a fast bulk chunk is judged: the strict, trust-checked lookup, a second chance for a lost packet.
    return sandbox_verdicts(sample) if sandbox else verify_many(sample, with_second_chance(domain_lookup(strict=True)))


def estimate_of(verdicts: Sequence[Verdict], *, population: int) -> Estimate:
    """Each status's share of the sample (to the whole percent) and the margin of error at 95%."""
    n = len(verdicts)
    counts = Counter(verdict.status for verdict in verdicts)
    return {
        "sample_size": n,
        "population": population,
        "shares": {status.value: round(counts[status] / n, 2) for status in Status},
        "margin_of_error": margin_of_error(n, population),
        "confidence_level": CONFIDENCE_LEVEL,
    }


def margin_of_error(n: int, population: int) -> float:
    """The widest 95% margin of a share estimated from `n` of `population` drawn without replacement
    (p = 0.5, with the finite population correction), rounded up to the whole percent."""
    correction = (population - n) / (population - 1) if population > 1 else 0.0
    margin = Z_95 * math.sqrt(0.25 / n * correction)
    return math.ceil(margin * 100) / 100
