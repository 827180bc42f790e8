"""Single verification: look up (cache or engine), then charge, cache and record at once.

The API and the portal both go through `verification_run`, so a verification costs the
same and is cached the same whichever door it came in by.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from accounts.models import Account
from billing.services import InsufficientCredits, credits_spend
from verification.engine import Verdict, verify_one
from verification.engine.syntax import normalise
from verification.models import CachedVerdict, IdempotencyRecord
from verification.resolver import domain_lookup

# Renders the response body of a verdict (and whether it came from cache).
Renderer = Callable[[Verdict, bool], bytes]


def verification_lookup(*, account: Account, email: str, mode: str = "fast") -> tuple[Verdict, bool]:
    """The verdict for an address and whether it came from this account's cache. Writes nothing."""
    normalised = normalise(email)
    cached = CachedVerdict.objects.fresh(account_id=account.pk, email=normalised, mode=mode)
    if cached is not None:
        return cached, True
    return verify_one(normalised, domain_lookup()), False


def verification_run[T](*, account: Account, email: str, finish: Callable[[Verdict, bool], T]) -> T:
    """Verify one address for an account: one credit, cached or not. Raises InsufficientCredits.

    DNS runs before the transaction so no lock is held while waiting on the network;
    the charge, the cache entry and whatever `finish` records then commit together.
    """
    if account.credit_balance < 1:
        raise InsufficientCredits
    verdict, cached = verification_lookup(account=account, email=email)
    with transaction.atomic():
        credits_spend(account=account, amount=1, reference="verify")
        if not cached:
            CachedVerdict.objects.store(account_id=account.pk, verdict=verdict)
        return finish(verdict, cached)


def verification_perform(
    *, account: Account, email: str, render: Renderer, idempotency: IdempotencyRecord | None = None
) -> bytes:
    """The API's door: returns the rendered body and completes the idempotency record with it."""

    def finish(verdict: Verdict, cached: bool) -> bytes:
        body = render(verdict, cached)
        if idempotency is not None:
            idempotency.complete(status=200, body=body, headers={"Content-Type": "application/json; charset=utf-8"})
        return body

    return verification_run(account=account, email=email, finish=finish)


def verification_check(*, account: Account, email: str) -> tuple[Verdict, bool]:
    """The portal's door: the verdict and whether it came from this account's cache."""
    return verification_run(account=account, email=email, finish=lambda verdict, cached: (verdict, cached))
