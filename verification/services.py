"""Single verification: look up (cache or engine), then charge, cache and record at once.

The API and the portal both go through `verification_run`, so a verification costs the
same and is cached the same whichever door it came in by.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from accounts.models import Account
from billing.services import credits_require, credits_spend
from lib import metrics
from lib.errors import DomainError
from verification.deep import deep_verify_many
from verification.engine import SubStatus, Verdict, verify_one
from verification.engine.syntax import normalise
from verification.models import CachedVerdict
from verification.resolver import domain_lookup, resolver_broken


class DeepModeDisabled(DomainError):
    code = "deep_mode_disabled"
    param = "validation_mode"
    message = "Deep validation is not available yet."


VALIDATION_MODES = ("fast", "deep")


def mode_require(mode: object) -> str:
    """The validation mode, checked: invalid_request for anything but fast or deep, DeepModeDisabled
    for `deep` while the operator has not turned it on. The API, the portal and bulk all come here."""
    if mode not in VALIDATION_MODES:
        raise DomainError(f"validation_mode: {mode!r} is not one of fast, deep.", "validation_mode")
    if mode == "deep" and not settings.VERIFIER_DEEP_MODE:
        raise DeepModeDisabled
    return str(mode)


@dataclass(frozen=True, slots=True)
class Verification:
    """A verdict as one customer received it: from their cache or not, and how fast."""

    verdict: Verdict
    cached: bool
    response_time_ms: int
    charged: bool = True

    def to_dict(self) -> dict[str, Any]:
        # The shape VerificationResultSerializer documents, without its per-call cost.
        return {**self.verdict.to_dict(), "cached": self.cached, "response_time_ms": self.response_time_ms}


def verification_lookup(*, account: Account, email: str, mode: str = "fast") -> tuple[Verdict, bool]:
    """The verdict for an address and whether it came from this account's cache. Writes nothing."""
    normalised = normalise(email)
    cached = CachedVerdict.objects.fresh(account_id=account.pk, email=normalised, mode=mode)
    if cached is not None:
        return cached, True
    if mode == "deep":
        return deep_verify_many([normalised])[0], False
    return verify_one(normalised, domain_lookup()), False


@contextmanager
def verification_charged(
    *, account: Account, email: str, mode: str = "fast", started: float | None = None, source: str = "api"
) -> Iterator[Verification]:
    """Verify one address for an account: one credit, cached or not. Raises InsufficientCredits.

    Free only when the verdict is `unknown` because our own resolver is broken (verification/trust.py):
    the fault is ours, not the address's.

    DNS runs before the transaction, so no lock is held while waiting on the network. The result
    is yielded inside the transaction that charges and caches: what the caller writes in its
    `with` block commits with the charge or not at all. The API stores its idempotent reply
    there, so a charged request always has its replay and a replay is never charged.
    """
    mode_require(mode)
    credits_require(account=account, amount=1)
    verdict, cached = verification_lookup(account=account, email=email, mode=mode)
    elapsed = time.perf_counter() - (started if started is not None else time.perf_counter())
    withheld = not cached and _judged_by_broken_resolver(verdict)
    result = Verification(verdict, cached, math.ceil(elapsed * 1000), charged=not withheld)
    with transaction.atomic():
        if result.charged:
            credits_spend(account=account, amount=1, reference="verify")
        if not cached:
            CachedVerdict.objects.store(account_id=account.pk, verdict=verdict)
        yield result
    metrics.verifications_counted([verdict.status], source=source)
    if withheld:
        metrics.verdicts_withheld(1, source=source)


def _judged_by_broken_resolver(verdict: Verdict) -> bool:
    return verdict.sub_status is SubStatus.DNS_TEMPORARY_FAILURE and resolver_broken()


def verification_run(*, account: Account, email: str, mode: str = "fast", source: str = "api") -> Verification:
    """`verification_charged` for a caller with nothing to write beside the charge (the portal)."""
    with verification_charged(account=account, email=email, mode=mode, source=source) as result:
        return result
