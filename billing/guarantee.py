"""The bounce guarantee (docs/guarantee.md): a charged `valid`, high-confidence answer that hard-bounces for
the same account within 30 days, by an authenticated event of its sending service, is credited back once.

Only the webhooks whose signature or credentials held call `guarantee_refunds`; what an account reports
itself (POST /v1/feedback, the portal's upload, an unchecked webhook) never reaches it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import QuerySet
from django.db.models.functions import Length
from django.utils import timezone

from accounts.models import Account
from billing.models import ANSWERS_KEPT, AnswerBatch, GuaranteeRefund, ValidAnswer
from billing.services import credits_guarantee_refund
from feedback.models import Outcome
from feedback.reports import CLOCK_SKEW, Report
from lib import sql
from lib.address_keys import address_key, key_head

# How long after a valid answer a hard bounce of it is refunded.
REFUND_WINDOW = timedelta(days=30)


# Answers filed in one transaction at most (about this many, whole batches): SQLite has one writer at a
# time, and a request waiting for it (an API key's rate count is a write) waits for one transaction.
FILING_ANSWERS = 3_000
# The task's pause between two transactions on SQLite: a request waiting for the write lock tries again
# 1, 2, 5 and 10 ms after its first try, then every 15 to 25 ms (SQLite's busy handler), and gets it
# in the pause rather than losing it to the next transaction.
FILING_PAUSE = 0.025


# A ValidAnswer row as answers_insert writes it.
type AnswerRow = tuple[int, str, int, str, bool, object, object]


def answer_rows(
    account_id: int, answered_at: datetime, answers: Iterable[tuple[str, str, bool]]
) -> Iterator[AnswerRow]:
    """The ValidAnswer rows of (address key, provider family, high confidence) answers given at `answered_at`."""
    at, until = sql.db_datetime(answered_at), sql.db_datetime(answered_at + ANSWERS_KEPT)
    return ((account_id, key, key_head(key), family, high, at, until) for key, family, high in answers)


def answers_insert(rows: Sequence[AnswerRow]) -> None:
    """ValidAnswer rows written by hand (lib/sql.py): (account id, address key, its head, provider family,
    high confidence, answered at, expires at), the times as the database stores them."""
    sql.execute_many(
        f"INSERT INTO {sql.table(ValidAnswer)}"
        " (account_id, address_key, key_head, provider_family, high_confidence, answered_at, expires_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)",
        rows,
    )


def answers_filed(account_id: int | None = None, *, pause: float = 0.0) -> int:
    """File the account's batches of valid answers (None: every account's) as ValidAnswer rows; returns
    how many answers were filed. Whatever reads ValidAnswer calls it first, so an answer counts, refunds
    and is erased from the moment its chunk was charged (docs/guarantee.md, "When an answer is kept").

    Each transaction takes whole batches, about FILING_ANSWERS answers, and inserts them sorted by key
    head: the index's pages are then written in one pass rather than each for one row. A batch is
    taken under its row's lock (PostgreSQL) or the write lock (SQLite's IMMEDIATE transactions), and
    deleted in the same transaction: two callers never file it twice. The task after a job passes
    `pause` (FILING_PAUSE); a reader, which waits for the answers, does not."""
    batches = AnswerBatch.objects.all() if account_id is None else AnswerBatch.objects.filter(account_id=account_id)
    filed = 0
    while taking := _next_batches(batches):  # a read first: the guarantee's readers call this at every turn
        if filed and pause and connection.vendor == "sqlite":
            time.sleep(pause)
        with transaction.atomic():
            taken: list[int] = []
            rows: list[AnswerRow] = []
            for pk, account, answered_at, packed in (
                AnswerBatch.objects.select_for_update()
                .filter(pk__in=taking)
                .values_list("pk", "account_id", "answered_at", "answers")
            ):
                taken.append(pk)
                rows.extend(answer_rows(account, answered_at, AnswerBatch.unpacked(bytes(packed))))
            rows.sort(key=lambda row: row[2])
            answers_insert(rows)
            AnswerBatch.objects.filter(pk__in=taken).delete()  # none if another caller filed them meanwhile
        filed += len(rows)
    return filed


# How many of the oldest batches a filing looks at for its next transaction (their sizes, not their answers).
_PEEK = 100


def _next_batches(batches: QuerySet[AnswerBatch]) -> list[int]:
    """The oldest batches, whole, up to about FILING_ANSWERS answers (at least one): read by their
    sizes, so a transaction loads only the answers it files, however many batches wait."""
    sizes = batches.order_by("pk").annotate(size=Length("answers")).values_list("pk", "size")[:_PEEK]
    taking: list[int] = []
    answers = 0
    for pk, size in sizes:
        answers += size // AnswerBatch.RECORD
        if taking and answers > FILING_ANSWERS:
            break
        taking.append(pk)
    return taking


# A batch this old has outlived the task its job's completion queued (a worker killed before it ran).
LEFT_OVER = timedelta(minutes=5)


def answers_left_filed() -> int:
    """The batches of the accounts with one older than LEFT_OVER, filed (every ten minutes)."""
    old = AnswerBatch.objects.filter(answered_at__lt=timezone.now() - LEFT_OVER)
    return sum(answers_filed(pk) for pk in old.values_list("account_id", flat=True).distinct())


def guarantee_refunds(*, account: Account, reports: Iterable[Report | None]) -> int:
    """Refund what these authenticated reports' hard bounces entitle the account to; returns how many
    credits were given back. Idempotent: a report seen before refunds nothing more."""
    bounces = [r for r in reports if r is not None and r.outcome == Outcome.HARD_BOUNCE]
    if bounces:
        answers_filed(account.pk)
    return sum(_refund(account, report.email, report.occurred_at) for report in bounces)


def refundable_answer(account: Account, email: str, bounced_at: datetime) -> ValidAnswer | None:
    """The newest charged high-confidence valid answer of the address at most REFUND_WINDOW before the bounce
    (a bounce stamped up to CLOCK_SKEW before the answer counts as after it: senders' clocks and whole-second
    times)."""
    answers = ValidAnswer.objects.of_keys([address_key(email)]).filter(
        account=account,
        high_confidence=True,
        answered_at__lte=bounced_at + CLOCK_SKEW,
        answered_at__gte=bounced_at - REFUND_WINDOW,
    )
    return answers.order_by("-answered_at", "-id").first()


def _refund(account: Account, email: str, bounced_at: datetime) -> bool:
    answer = refundable_answer(account, email, bounced_at)
    if answer is None:
        return False
    with transaction.atomic():
        # One refund decision at a time per account: the month's cap is counted, then moved, under this lock.
        Account.objects.select_for_update().filter(pk=account.pk).values_list("pk", flat=True).get()
        refund = _claimed(answer, bounced_at)
        if refund is None or not _under_cap(account, answer.answered_at):
            return False
        note = f"Bounce guarantee: valid answer of {answer.answered_at:%Y-%m-%d} hard-bounced {bounced_at:%Y-%m-%d}"
        credits_guarantee_refund(account=account, reference=f"answer:{answer.pk}", note=note)
        refund.credited = True
        refund.save(update_fields=["credited"])
    return True


def _claimed(answer: ValidAnswer, bounced_at: datetime) -> GuaranteeRefund | None:
    """The answer's refund record, created now; None when it already had one (a retry, a parallel delivery)."""
    try:
        with transaction.atomic():
            return GuaranteeRefund.objects.create(answer=answer, account_id=answer.account_id, bounced_at=bounced_at)
    except IntegrityError:
        return None


def month_of(moment: datetime) -> tuple[datetime, datetime]:
    """The calendar month (UTC) holding `moment`: its first instant and the next month's."""
    start = moment.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return start, (start + timedelta(days=32)).replace(day=1)


def monthly_cap(account_id: int, moment: datetime) -> int:
    """How many of the valid answers given in the calendar month of `moment` may be credited back:
    GUARANTEE_MAX_SHARE of the account's charged valid answers that month, rounded down."""
    start, end = month_of(moment)
    answers = ValidAnswer.objects.filter(account_id=account_id, answered_at__gte=start, answered_at__lt=end).count()
    return math.floor(answers * settings.GUARANTEE_MAX_SHARE + 1e-9)


def _under_cap(account: Account, answered_at: datetime) -> bool:
    """Whether another refund of that month's answers may still be credited."""
    start, end = month_of(answered_at)
    credited = GuaranteeRefund.objects.filter(
        account=account, credited=True, answer__answered_at__gte=start, answer__answered_at__lt=end
    )
    return credited.count() < monthly_cap(account.pk, answered_at)
