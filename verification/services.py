"""Single verification: look up (cache or engine), then charge, cache and record at once.

The API and the portal both go through `verification_run`, so a verification costs the
same and is cached the same whichever door it came in by.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from accounts.models import Account
from api.models import IdempotencyRecord
from api.renderers import JSON_CONTENT_TYPE, render_json
from billing.services import credits_require, credits_spend
from lib import metrics
from verification.engine import Verdict, verify_one
from verification.engine.syntax import normalise
from verification.models import CachedVerdict
from verification.resolver import domain_lookup


@dataclass(frozen=True, slots=True)
class Verification:
    """A verdict as one customer received it: from their cache or not, and how fast."""

    verdict: Verdict
    cached: bool
    response_time_ms: int

    def to_dict(self) -> dict[str, Any]:
        # The shape VerificationResultSerializer documents, without its per-call cost.
        return {**self.verdict.to_dict(), "cached": self.cached, "response_time_ms": self.response_time_ms}


def verification_lookup(*, account: Account, email: str, mode: str = "fast") -> tuple[Verdict, bool]:
    """The verdict for an address and whether it came from this account's cache. Writes nothing."""
    normalised = normalise(email)
    cached = CachedVerdict.objects.fresh(account_id=account.pk, email=normalised, mode=mode)
    if cached is not None:
        return cached, True
    return verify_one(normalised, domain_lookup()), False


def verification_run(
    *,
    account: Account,
    email: str,
    started: float | None = None,
    idempotency: IdempotencyRecord | None = None,
    source: str = "api",
) -> Verification:
    """Verify one address for an account: one credit, cached or not. Raises InsufficientCredits.

    DNS runs before the transaction so no lock is held while waiting on the network; the
    charge, the cache entry and the idempotency record's response then commit together, so a
    charged request always has its replay and a replay is never charged.
    """
    credits_require(account=account, amount=1)
    verdict, cached = verification_lookup(account=account, email=email)
    elapsed = time.perf_counter() - (started if started is not None else time.perf_counter())
    result = Verification(verdict, cached, math.ceil(elapsed * 1000))
    with transaction.atomic():
        credits_spend(account=account, amount=1, reference="verify")
        if not cached:
            CachedVerdict.objects.store(account_id=account.pk, verdict=verdict)
        if idempotency is not None:
            idempotency.complete(
                status=200, body=render_json(result.to_dict()), headers={"Content-Type": JSON_CONTENT_TYPE}
            )
    metrics.verifications_counted([verdict.status], source=source)
    return result
