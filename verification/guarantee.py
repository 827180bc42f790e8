"""Charged `valid` answers, recorded for the bounce guarantee (docs/guarantee.md, billing/guarantee.py).

Single, batch and bulk verification record here, in the transaction that charges: an answer that cost
nothing (an unknown made free, a sandbox answer) is never recorded, so it can never be refunded. A
bulk chunk's answers go in one packed row (billing.AnswerBatch), filed as ValidAnswer rows after its
job completes or before anything reads them (billing/guarantee.py `answers_filed`).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils import timezone

from billing.guarantee import answer_rows, answers_insert
from billing.models import AnswerBatch
from lib import sql
from lib.address_keys import address_key
from verification.engine import Status, Verdict
from verification.engine.providers import provider_family


def valid_answers_batch(*, account_id: int, verdicts: Iterable[Verdict]) -> None:
    """`valid_answers_record` for a bulk chunk: its charged valid answers packed into one row, written
    (by hand, lib/sql.py) in the caller's transaction."""
    if answers := _valid_answers(verdicts):
        sql.execute(
            f"INSERT INTO {sql.table(AnswerBatch)} (account_id, answered_at, answers) VALUES (%s, %s, %s)",
            [account_id, sql.db_datetime(timezone.now()), AnswerBatch.packed(answers)],
        )


def valid_answers_record(*, account_id: int, verdicts: Iterable[Verdict]) -> None:
    """Record the charged verdicts that answered `valid` (as the customer saw them, reports applied):
    single and batch verification. Written by hand (lib/sql.py), in the caller's transaction."""
    if answers := _valid_answers(verdicts):
        answers_insert(list(answer_rows(account_id, timezone.now(), answers)))


def _valid_answers(verdicts: Iterable[Verdict]) -> list[tuple[str, str, bool]]:
    """(address key, provider family, high confidence) of each `valid` verdict."""
    return [
        (address_key(verdict.email), provider_family(verdict.mail_provider), verdict.confidence == "high")
        for verdict in verdicts
        if verdict.status is Status.VALID
    ]
