"""Callbacks: one delivery per event (a job's, or a verification's that resolved), up to 6
attempts, each recorded.

Every attempt is signed afresh with its own time and carries a freshly issued
result URL; the event id stays the same so receivers can de-duplicate. Retries
are django-q2 schedules (a worker never sleeps waiting for one).
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import TypedDict

from django.conf import settings
from django.utils import timezone

from jobs import queue
from jobs.downloads import result_url
from jobs.models import CallbackAttempt, CallbackDelivery, Job
from lib import metrics, outbound
from lib.jsonbody import render_json
from lib.signing import signature_header, standard_webhook_headers
from verification.models import RetriedVerification
from verification.resolution import retried_answer, verifications_reasked

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 6  # the first try and 5 retries


RESOLVED = "verification.resolved"


class CallbackBody(TypedDict):
    event: str
    job_id: str
    status: str
    partial: bool
    total: int
    processed: int
    valid: int
    invalid: int
    risky: int
    unknown: int
    result_url: str | None
    event_id: str


def callback_queue(*, job: Job, event: str) -> CallbackDelivery | None:
    """Record the event and queue its first attempt once the caller's transaction commits.

    A worker that has just completed a job makes that attempt itself at once (`callback_attempt`
    with `number=1`): queued, it would wait behind the bulk tasks ahead of it. The queued task is
    the safety net if the worker dies first, and does nothing once the attempt is made.
    """
    if not job.callback_url:
        return None
    delivery = CallbackDelivery.objects.create(job=job, event=event, url=job.callback_url)
    queue.callback_attempt_on_commit(delivery.pk, 1)
    return delivery


def resolution_callback_queue(*, verification: RetriedVerification) -> CallbackDelivery | None:
    """`callback_queue` for a verification asked again that resolved: to the URL given with the
    request, else the account's (set in the portal); nothing when neither is set."""
    url = verification.callback_url or verification.account.callback_url
    if not url:
        return None
    delivery = CallbackDelivery.objects.create(verification=verification, event=RESOLVED, url=url)
    queue.callback_attempt_on_commit(delivery.pk, 1)
    return delivery


def verifications_resolve() -> int:
    """Ask the due verifications again (verification/resolution.py); each that resolved gets its
    `verification.resolved` event in the transaction that settles it. Returns how many resolved."""
    with verifications_reasked() as resolved:
        for verification in resolved:
            resolution_callback_queue(verification=verification)
    return len(resolved)


def event_body(delivery: CallbackDelivery) -> CallbackBody | dict[str, object]:
    """A job's event, or a verification's: GET /v1/verifications/{id}'s answer (docs/api.md)."""
    if delivery.verification is None:
        return callback_body(delivery)
    return {"event": delivery.event, "event_id": delivery.event_id, **retried_answer(delivery.verification)}


def callback_body(delivery: CallbackDelivery) -> CallbackBody:
    """The fields docs/bulk.md ("Callback") lists; `event_id` is the X-Service-Event-Id."""
    job, event = delivery.job, delivery.event
    assert job is not None  # a job's event
    return {
        "event": event,
        "job_id": job.pk,
        "status": job.status,
        "partial": job.partial,
        "total": job.total,
        "processed": job.processed,
        "valid": job.valid,
        "invalid": job.invalid,
        "risky": job.risky,
        "unknown": job.unknown,
        "result_url": result_url(job),
        "event_id": delivery.event_id,
    }


def retry_delay(attempt: int) -> timedelta:
    """Wait after failed attempt n (1-based): base * factor ** (n - 1): 30 s, 2 min, 8 min, 32 min, ~2 h."""
    return timedelta(seconds=settings.CALLBACK_RETRY_BASE_SECONDS * settings.CALLBACK_RETRY_FACTOR ** (attempt - 1))


def callback_attempt(*, delivery_id: int, number: int | None = None) -> CallbackAttempt | None:
    """Make the next attempt of a pending delivery (only if it is attempt `number`, when given);
    schedule the one after if it fails."""
    related = CallbackDelivery.objects.select_related("job__account", "verification__account")
    delivery = related.filter(pk=delivery_id).first()
    if delivery is None:
        return None  # its job (or verification) was deleted
    if number is not None and number != delivery.attempts + 1:
        return None  # that attempt was made already
    number = delivery.attempts + 1
    if delivery.state != CallbackDelivery.State.PENDING or number > MAX_ATTEMPTS:
        return None
    claimed = CallbackDelivery.objects.filter(
        pk=delivery.pk, state=CallbackDelivery.State.PENDING, attempts=delivery.attempts
    ).update(attempts=number)
    if not claimed:
        return None
    started_at = timezone.now()
    outcome, permanent = _send(delivery)
    attempt = CallbackAttempt.objects.create(
        delivery=delivery,
        number=number,
        started_at=started_at,
        status_code=outcome.status_code,
        error=outcome.error,
        duration_ms=outcome.duration_ms,
    )
    _after_attempt(delivery, number, outcome.ok, permanent)
    metrics.callback_attempt_counted(ok=outcome.ok, permanent=permanent)
    return attempt


def _send(delivery: CallbackDelivery) -> tuple[outbound.Outcome, bool]:
    """The outcome, and whether a failure is permanent (the URL is refused)."""
    owner = delivery.job or delivery.verification
    assert owner is not None
    body = render_json(event_body(delivery))
    timestamp = int(time.time())
    secrets = owner.account.active_signing_secrets()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "email-verifier-callbacks/1",
        "X-Service-Event-Id": delivery.event_id,
        "X-Service-Signature": signature_header(body=body, secrets=secrets, timestamp=timestamp),
        **standard_webhook_headers(event_id=delivery.event_id, body=body, secrets=secrets, timestamp=timestamp),
    }
    try:
        return outbound.post(delivery.url, body, headers), False
    except outbound.UnsafeUrl as refused:
        return outbound.Outcome(None, f"Refused: {refused}"[:255], 0), True
    except Exception as exc:  # whatever else goes wrong is a failed attempt, recorded and retried, never lost
        logger.exception("callback %s: attempt crashed", delivery.event_id)
        return outbound.Outcome(None, f"{type(exc).__name__}: {exc}"[:255], 0), False


def _after_attempt(delivery: CallbackDelivery, number: int, ok: bool, permanent: bool) -> None:
    now = timezone.now()
    pending = CallbackDelivery.objects.filter(pk=delivery.pk, state=CallbackDelivery.State.PENDING)
    if ok:
        pending.update(state=CallbackDelivery.State.DELIVERED, delivered_at=now)
    elif permanent or number >= MAX_ATTEMPTS:
        pending.update(state=CallbackDelivery.State.FAILED)
    else:
        queue.callback_attempt_at(
            delivery.pk, number + 1, name=f"callback-{delivery.event_id}-{number + 1}", when=now + retry_delay(number)
        )
