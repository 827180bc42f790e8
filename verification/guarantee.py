"""Charged `valid` answers, recorded for the bounce guarantee (docs/guarantee.md, billing/guarantee.py).

Single, batch and bulk verification record here, in the transaction that charges: an answer that cost
nothing (an unknown made free, a sandbox answer) is never recorded, so it can never be refunded.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils import timezone

from billing.models import ANSWERS_KEPT, ValidAnswer
from lib.address_keys import address_key
from verification.engine import Status, Verdict
from verification.engine.providers import provider_family


def valid_answers_record(*, account_id: int, verdicts: Iterable[Verdict]) -> None:
    """Record the charged verdicts that answered `valid` (as the customer saw them, reports applied)."""
    now = timezone.now()
    rows = [
        ValidAnswer(
            account_id=account_id,
            address_key=address_key(verdict.email),
            provider_family=provider_family(verdict.mail_provider),
            high_confidence=verdict.confidence == "high",
            answered_at=now,
            expires_at=now + ANSWERS_KEPT,
        )
        for verdict in verdicts
        if verdict.status is Status.VALID
    ]
    if rows:
        ValidAnswer.objects.bulk_create(rows)
