"""The bounce guarantee (docs/guarantee.md): a charged `valid`, high-confidence answer that hard-bounces for
the same account within 30 days, by an authenticated event of its sending service, is credited back once.

Only the webhooks whose signature or credentials held call `guarantee_refunds`; what an account reports
itself (POST /v1/feedback, the portal's upload, an unchecked webhook) never reaches it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction

from accounts.models import Account
from billing.models import GuaranteeRefund, ValidAnswer
from billing.services import credits_guarantee_refund
from feedback.models import Outcome
from feedback.reports import CLOCK_SKEW, Report
from lib.address_keys import address_key

# How long after a valid answer a hard bounce of it is refunded.
REFUND_WINDOW = timedelta(days=30)


def guarantee_refunds(*, account: Account, reports: Iterable[Report | None]) -> int:
    """Refund what these authenticated reports' hard bounces entitle the account to; returns how many
    credits were given back. Idempotent: a report seen before refunds nothing more."""
    bounces = [r for r in reports if r is not None and r.outcome == Outcome.HARD_BOUNCE]
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
