"""Unknowns resolve later (docs/deep.md): a deep single or batch verification answered `unknown`
for a temporary reason is kept as a RetriedVerification and asked again in the background on
VERIFIER_SMTP_RETRY_SCHEDULE, until it answers anything but `unknown` (resolved) or the schedule
runs out (gave_up).

It costs one credit in all. Charged at its first answer (unknowns cost a credit, the default),
resolving costs nothing more. With VERIFIER_CHARGE_UNKNOWN=0 the first answer was free: the credit
is taken when it resolves, in the transaction that settles it, and counted against the key's spend
caps; an account that can no longer pay by then gets no answer (gave_up, nothing charged).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import Account, ApiKey, KeyMode
from accounts.spend_caps import KeySpendCapReached, cap_spend
from billing.services import InsufficientCredits, credits_spend
from lib.errors import DomainError
from verification.deep import deep_verify_many, is_temporary
from verification.egresses import egresses_of_region
from verification.engine import Status, Verdict
from verification.engine.modes import ValidationMode
from verification.judging import rows_judged
from verification.models import CachedVerdict, RetriedVerification
from verification.models.retried import ATTEMPT_LEASE, KEPT_SETTLED
from verification.outcomes import verdicts_with_feedback

# At most this many due verifications are asked again by one run of the sweep (every minute).
REASK_BATCH = 100
State = RetriedVerification.State


def retried_open(
    *,
    account: Account,
    key: ApiKey | None,
    answered: Sequence[tuple[Verdict, bool]],
    callback_url: str = "",
    source: str = "api",
) -> dict[str, str]:
    """Keep each answered (verdict, charged) that is a temporary unknown, to be asked again;
    returns their ids by address. Call it in the transaction that charges the answers."""
    delays = settings.VERIFIER_SMTP_RETRY_SCHEDULE
    now = timezone.now()
    lifetime = timedelta(seconds=sum(delays)) + ATTEMPT_LEASE * len(delays) + KEPT_SETTLED
    rows = [
        RetriedVerification(
            account=account,
            key=key,
            result=verdict.to_dict(),
            charged=charged,
            callback_url=callback_url,
            source=source,
            next_attempt_at=now + timedelta(seconds=delays[0]),
            created_at=now,
            expires_at=now + lifetime,
        )
        for verdict, charged in answered
        if is_temporary(verdict)
    ]
    RetriedVerification.objects.bulk_create(rows)
    return {row.email: row.pk for row in rows}


class VerificationNotFound(DomainError):
    code = "not_found"
    message = "No verification of yours is asked again under this id."


def retried_read(*, account: Account, key_mode: str, verification_id: str) -> dict[str, Any]:
    """A verification asked again, as GET /v1/verifications/{id} answers it: its latest result and
    resolution. Another account's, and any for a test key (the sandbox never asks again), are not found."""
    found = None
    if key_mode == KeyMode.LIVE:
        found = RetriedVerification.objects.filter(account=account, pk=verification_id).first()
    if found is None:
        raise VerificationNotFound
    return retried_answer(found)


def retried_answer(row: RetriedVerification) -> dict[str, Any]:
    return {**row.result, "verification_id": row.pk, "resolution": row.resolution()}


@dataclass
class _Attempt:
    row: RetriedVerification
    verdict: Verdict


@contextmanager
def verifications_reasked() -> Iterator[list[RetriedVerification]]:
    """Ask the due verifications again and settle them; yields those that resolved, inside the
    transaction that settles them (the caller queues their events there, so each is sent once)."""
    now = timezone.now()
    # Deep mode turned off since: nothing is asked (no SMTP session opens); they wait for it to return.
    claimed = _claimed(now) if settings.VERIFIER_DEEP_MODE else []
    attempts = [_Attempt(row, verdict) for row, verdict in _asked(claimed)]
    with transaction.atomic():
        settled = [row for attempt in attempts if (row := _settle(attempt)) is not None]
        yield [row for row in settled if row.state == State.RESOLVED]


def _claimed(now: datetime) -> list[RetriedVerification]:
    due = RetriedVerification.objects.due(now).values_list("pk", "attempts")[:REASK_BATCH]
    won = [pk for pk, attempts in due if RetriedVerification.objects.claim(pk=pk, attempts=attempts, now=now)]
    return list(RetriedVerification.objects.select_related("account", "key").filter(pk__in=won))


def _asked(rows: list[RetriedVerification]) -> Iterator[tuple[RetriedVerification, Verdict]]:
    """Each row's new verdict. Rows on their n-th attempt start n egresses further along, so an
    answer refused through one egress is asked again through another where there is one.
    An account pinned to a probe region is asked through that region's egresses only. The catch-all
    probe is the one of the day the row was first asked, which greylisting has seen (deep.py)."""
    batches: dict[tuple[int, str, date], list[RetriedVerification]] = {}
    for row in rows:
        batches.setdefault((row.attempts, row.account.probe_region, row.created_at.date()), []).append(row)
    for (turn, region, day), batch in sorted(batches.items(), key=lambda item: item[0]):
        emails = [row.email for row in batch]
        ask = partial(deep_verify_many, egress_turn=turn, egresses=egresses_of_region(region), probe_day=day)
        verdicts = rows_judged(emails, ask, mode=ValidationMode.DEEP)
        yield from zip(batch, verdicts, strict=True)


def _settle(attempt: _Attempt) -> RetriedVerification | None:
    """Record the attempt's answer (resolved, gave up, or asked again later) if the claim is still ours."""
    row, verdict = attempt.row, attempt.verdict
    state, next_at = _outcome(row, verdict)
    now = timezone.now()
    answered = verdicts_with_feedback(account_id=row.account_id, verdicts=[verdict])[0]
    fields: dict[str, Any] = {"state": state, "next_attempt_at": next_at, "result": answered.to_dict()}
    if state != State.PENDING:
        fields |= {"settled_at": now, "expires_at": now + KEPT_SETTLED}
    kept = RetriedVerification.objects.filter(pk=row.pk, state=State.PENDING, attempts=row.attempts)
    if not kept.update(**fields):
        return None  # another worker made this attempt after our lease ran out
    unknown = row.result
    for name, value in fields.items():
        setattr(row, name, value)
    if state == State.RESOLVED and not row.charged:
        _charge(row, unknown)
    if row.state == State.RESOLVED:
        CachedVerdict.objects.store(account_id=row.account_id, verdict=verdict)
    return row


def _outcome(row: RetriedVerification, verdict: Verdict) -> tuple[str, datetime | None]:
    if verdict.status is not Status.UNKNOWN:
        return State.RESOLVED, None
    delays = settings.VERIFIER_SMTP_RETRY_SCHEDULE
    if row.attempts >= len(delays):
        return State.GAVE_UP, None
    return State.PENDING, timezone.now() + timedelta(seconds=delays[row.attempts])


def _charge(row: RetriedVerification, unknown: dict[str, Any]) -> None:
    """Take the answer's one credit now (unknowns were free), counted against the key's caps; an
    account that cannot pay by now gets no answer: the verification gives up, nothing charged."""
    try:
        with transaction.atomic():
            if row.key is not None:
                cap_spend(key=row.key, amount=1)
            credits_spend(account=row.account, amount=1, reference=row.pk)
    except (InsufficientCredits, KeySpendCapReached):
        row.state, row.result = State.GAVE_UP, unknown  # the unpaid answer is not shown either
        row.save(update_fields=["state", "result"])
        return
    row.charged = True
    row.save(update_fields=["charged"])
