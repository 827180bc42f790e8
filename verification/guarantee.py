"""Charged `valid` answers, recorded for the bounce guarantee (docs/guarantee.md, billing/guarantee.py).

Single, batch and bulk verification record here, in the transaction that charges: an answer that cost
nothing (an unknown made free, a sandbox answer) is never recorded, so it can never be refunded.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils import timezone

from billing.models import ANSWERS_KEPT, ValidAnswer
from lib import sql
from lib.address_keys import address_key, key_head
from verification.engine import Status, Verdict
from verification.engine.providers import provider_family


def valid_answers_record(*, account_id: int, verdicts: Iterable[Verdict]) -> None:
    """Record the charged verdicts that answered `valid` (as the customer saw them, reports applied).
    Written by hand (lib/sql.py), in the caller's transaction: a bulk chunk records up to 2,000, and
    building them as ORM objects took about 7% of a deep chunk's worker time (py-spy)."""
    now = timezone.now()
    answered_at, expires_at = sql.db_datetime(now), sql.db_datetime(now + ANSWERS_KEPT)
    rows = [
        (
            account_id,
            key := address_key(verdict.email),
            key_head(key),
            provider_family(verdict.mail_provider),
            verdict.confidence == "high",
            answered_at,
            expires_at,
        )
        for verdict in verdicts
        if verdict.status is Status.VALID
    ]
    if rows:
        sql.execute_many(
            f"INSERT INTO {sql.table(ValidAnswer)}"
            " (account_id, address_key, key_head, provider_family, high_confidence, answered_at, expires_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)",
            rows,
        )
