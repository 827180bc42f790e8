"""Bulk jobs: process chunk by chunk, complete or fail (staff may cancel or retry), or be deleted.

The database is the source of truth. A chunk is claimed with a conditional
UPDATE that takes a lease and counts the attempt; its credits are reserved in
the claim's transaction and recorded on the chunk, so a re-run reuses them. A
chunk's results count (and are charged) only if its finishing UPDATE still
finds it leased to the same attempt. A worker killed at any point therefore
costs at most a re-run of one chunk, never a second charge.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Account, KeyMode
from billing.services import credits_release, credits_reserve
from jobs import files, queue, scheduling
from jobs.callbacks import callback_attempt, callback_queue
from jobs.models import MAIL_PROVIDER_PREFIX, Chunk, DeletedJob, Job
from jobs.notifications import job_finished_mail
from jobs.results import JobNotFound
from jobs.scheduling import UNFINISHED
from lib import metrics, sql
from verification.deep import deep_verify_many, is_asked_again
from verification.engine import Status, SubStatus, Verdict, verify_many
from verification.engine.core import with_second_chance
from verification.engine.mailboxes import HostSlots
from verification.engine.modes import ValidationMode
from verification.engine.sandbox import sandbox_verdicts
from verification.feedback import verdicts_with_feedback
from verification.judging import rows_judged
from verification.resolver import answers_withheld, domain_lookup, resolver_broken, resolver_last_finding

logger = logging.getLogger(__name__)

# A deep chunk with greylisted (4xx) rows is run again this many times before they stay `unknown`.
DEEP_RETRY_ROUNDS = 3
# The lock files bounding how many of a machine's workers run deep chunks at once (_deep_slot).
DEEP_SLOTS = "bulk-deep-chunks"
# A chunk whose claim has been taken this many times without finishing has crashed
# its workers three times: the job fails rather than crash a fourth.
MAX_CHUNK_ATTEMPTS = 3
CANCELLED_BY_STAFF = "cancelled by staff"


def chunk_run_next(*, budget: float) -> int:
    """Run chunks, each the one whose turn it is (jobs/scheduling.py), for up to `budget` seconds.

    Returns how many ran (at least one while any waits). One task goes on from chunk to chunk
    rather than one task a chunk: a round trip through the queue between chunks would leave the
    worker idle for the broker's poll interval. When the budget is spent and chunks still wait,
    it queues its successor and ends, so other tasks (callbacks, completions) get the worker in
    between. While the resolver is broken it claims nothing: bulk work waits (`chunks_resume`).
    """
    deadline, ran = time.monotonic() + budget, 0
    while ran == 0 or time.monotonic() < deadline:  # at least one chunk a task: always progress
        if _waiting_for_resolver():
            return ran
        with _deep_slot() as slot:
            chunk = _claim_next(deep=slot.held)
            if chunk is None:
                return ran  # nothing waiting (for this worker), or every pick taken by other workers, which go on
            if not scheduling.is_slow(chunk.job):
                slot.give_back()  # a fast chunk: another worker may take deep work meanwhile
            _process(chunk)
        ran += 1
        sql.wal_checkpoint()  # the worker pays for the write-ahead log's copying, not a verification
        os.sched_yield()  # let the web in between chunks
    if scheduling.work_waiting():
        scheduling.work_enqueue(1)
    return ran


def _claim_next(*, deep: bool) -> Chunk | None:
    for chunk_id in scheduling.chunk_pick(deep=deep):
        chunk = chunk_claim(chunk_id=chunk_id)
        if chunk is not None:
            return chunk
    return None


class _Slot:
    """One of this machine's deep-chunk slots, or none (`held` False)."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd

    @property
    def held(self) -> bool:
        return self.fd is not None

    def give_back(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the lock
            self.fd = None


@contextmanager
def _deep_slot() -> Iterator[_Slot]:
    """Fair share across modes: a live deep chunk holds its worker for as long as mail servers take
    (up to half a lease), so at most BULK_DEEP_WORKERS of a machine's workers run deep chunks at
    once (by default all but one), each holding a per-machine lock file for it (the SMTP host
    slots' kind: released by the kernel however the worker dies). A worker without one takes only
    fast chunks, so another customer's fast job always finds a worker."""
    try:
        slot = _Slot(HostSlots(settings.VERIFIER_SMTP_LOCK_DIR, settings.BULK_DEEP_WORKERS).try_take(DEEP_SLOTS))
    except OSError:  # an unwritable lock directory stops deep work (its SMTP slots need it too), not fast work
        logger.exception("no deep-chunk slot: VERIFIER_SMTP_LOCK_DIR %s is unusable", settings.VERIFIER_SMTP_LOCK_DIR)
        slot = _Slot(None)
    try:
        yield slot
    finally:
        slot.give_back()


def chunk_run(*, chunk_id: int) -> None:
    """Claim this chunk, verify its addresses, record the result. Safe to call any number of times."""
    if _waiting_for_resolver():
        return
    chunk = chunk_claim(chunk_id=chunk_id)
    if chunk is not None:
        _process(chunk)


def _process(chunk: Chunk) -> None:
    if chunk.attempts > MAX_CHUNK_ATTEMPTS:
        job_fail(job_id=chunk.job_id, reason=f"Chunk {chunk.index} crashed {MAX_CHUNK_ATTEMPTS} times.")
        return
    try:
        emails = files.input_rows(chunk.job.input_name, chunk.index, chunk.reserved or 0)
    except OSError:
        logger.exception("job %s: input file unreadable", chunk.job_id)
        job_fail(job_id=chunk.job_id, reason="The uploaded file could not be read.")
        return
    deep = chunk.job.validation_mode == "deep"
    with answers_withheld() as withheld:
        # a test key's job: the sandbox, which asks no resolver and no mail server
        verdicts = sandbox_verdicts(emails) if chunk.job.key_mode == KeyMode.TEST else _verdicts(emails, deep=deep)
    if withheld or _failed_while_broken(verdicts, since=time.time()):  # fast and deep chunks alike
        chunk_put_back(chunk=chunk)
        metrics.verdicts_withheld(len(verdicts), source="bulk")
        _waiting_for_resolver()
        return
    # Greylisted rows are asked again later (not of the sandbox: it would answer the same).
    if (
        scheduling.is_slow(chunk.job)
        and chunk.retry_round < DEEP_RETRY_ROUNDS
        and any(is_asked_again(v) for v in verdicts)
    ):
        chunk_defer(chunk=chunk)
        return
    if chunk.job.key_mode != KeyMode.TEST:
        verdicts = verdicts_with_feedback(account_id=chunk.job.account_id, verdicts=verdicts)
    part = files.part_save(chunk.job_id, chunk.index, chunk.attempts, verdicts) if verdicts else ""
    if not chunk_finish(chunk=chunk, verdicts=verdicts, part_name=part):
        files.delete_quietly(part)
        return
    metrics.bulk_rows_counted(verdict.status for verdict in verdicts)
    job_complete_if_done(job_id=chunk.job_id)


def _verdicts(emails: list[str], *, deep: bool) -> list[Verdict]:
    """The chunk's verdicts; DNS through the strict, trust-checked lookup in both modes."""
    if not emails:
        return []
    lookup = domain_lookup(strict=True)
    if deep:
        seconds = settings.BULK_CHUNK_LEASE_SECONDS / 2
        judge = functools.partial(deep_verify_many, seconds=seconds, lookup=lookup)
        return rows_judged(emails, judge, mode=ValidationMode.DEEP)
    return rows_judged(
        emails, functools.partial(verify_many, lookup=with_second_chance(lookup)), mode=ValidationMode.FAST
    )


def chunk_defer(*, chunk: Chunk) -> bool:
    """Put a deep chunk with greylisted rows back, to be run again after
    VERIFIER_SMTP_GREYLIST_RETRY_SECONDS, if it is still ours. Nothing is charged or recorded: the
    run again asks the mail servers only what the shared caches do not hold (the greylisted rows),
    keeps the credits the chunk reserved, and charges once, when it finishes."""
    when = timezone.now() + timedelta(seconds=settings.VERIFIER_SMTP_GREYLIST_RETRY_SECONDS)
    with transaction.atomic():
        won = Chunk.objects.filter(pk=chunk.pk, state=Chunk.State.RUNNING, attempts=chunk.attempts).update(
            state=Chunk.State.PENDING,
            attempts=0,
            lease_expires_at=None,
            retry_round=F("retry_round") + 1,
            not_before=when,
        )
        if won:
            name = f"jobs: greylist retry {chunk.reference} round {chunk.retry_round + 1}"
            transaction.on_commit(lambda: queue.chunk_work_at(when, name=name))
    return bool(won)


def _failed_while_broken(verdicts: Sequence[Verdict], *, since: float) -> bool:
    """A row left `unknown` by DNS (nothing answered, or REFUSED) while the resolver was broken, by a
    check begun after the chunk's answers came."""
    failed = any(verdict.sub_status is SubStatus.DNS_TEMPORARY_FAILURE for verdict in verdicts)
    return failed and resolver_broken(since=since)


def _waiting_for_resolver() -> bool:
    """True while the resolver is broken; bulk work then goes on by itself once it recovers."""
    if not resolver_broken():
        return False
    queue.chunk_work_resumed(when=timezone.now() + timedelta(seconds=settings.VERIFIER_DNS_CANARY_SECONDS))
    return True


def jobs_wait_for_resolver() -> bool:
    """Whether unfinished jobs wait for the DNS resolver now: the last canary check found it broken,
    and workers claim nothing until a check finds it working. Reads the shared finding, asks no DNS:
    for the job page and the job API, which say why a job is not moving."""
    health = resolver_last_finding()
    return health is not None and health.broken


def chunks_resume() -> None:
    """Bulk work stopped for a broken resolver goes on, as many chunks at once as a new job's."""
    if not _waiting_for_resolver():
        scheduling.work_enqueue(settings.BULK_PARALLEL_CHUNKS)


def chunk_put_back(*, chunk: Chunk) -> bool:
    """A chunk judged by a broken resolver waits again as if never claimed: its verdicts are dropped,
    its credits released, its attempt not counted (a broken resolver is no crash)."""
    with transaction.atomic():
        won = Chunk.objects.filter(pk=chunk.pk, state=Chunk.State.RUNNING, attempts=chunk.attempts).update(
            state=Chunk.State.PENDING, attempts=F("attempts") - 1, lease_expires_at=None, reserved=None
        )
        if won:
            _chunk_release(chunk, chunk.reserved or 0, chunk.job)
    return bool(won)


def chunk_claim(*, chunk_id: int) -> Chunk | None:
    """Take the chunk's lease (pending, or running with an expired lease) and its credits."""
    now = timezone.now()
    lease = timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS)
    # The chunk's own conditions stay on the UPDATE itself, not in a subquery (as a join with the
    # job would put them): PostgreSQL re-checks only those after waiting for a row another worker
    # was claiming, so each waiter would claim the chunk again.
    unfinished_jobs = Job.objects.filter(status__in=UNFINISHED).values("pk")
    with transaction.atomic():
        won = Chunk.objects.filter(scheduling.claimable(now), pk=chunk_id, job_id__in=unfinished_jobs).update(
            state=Chunk.State.RUNNING, attempts=F("attempts") + 1, lease_expires_at=now + lease
        )
        if not won:
            return None
        chunk = Chunk.objects.select_related("job__account").get(pk=chunk_id)
        # Locks in one order everywhere (chunk, job, account), so PostgreSQL never deadlocks.
        chunk.job = Job.objects.select_for_update().select_related("account").get(pk=chunk.job_id)
        Job.objects.filter(pk=chunk.job_id).update(served_at=now)  # its account's turn is taken
        if chunk.attempts <= MAX_CHUNK_ATTEMPTS:
            Job.objects.filter(pk=chunk.job_id, status=Job.Status.PENDING).update(
                status=Job.Status.PROCESSING, started_at=now
            )
            if chunk.reserved is None:
                _reserve(chunk)
    return chunk


def _reserve(chunk: Chunk) -> None:
    """Hold credits for the chunk's rows; fewer than its rows makes the job partial."""
    job = chunk.job
    wanted = 0 if job.partial else chunk.size
    if job.key_mode == KeyMode.TEST:  # the sandbox costs nothing: its rows are "held" without a ledger entry
        held = wanted
    else:
        note = chunk.ledger_note(job.filename)
        held, _ = credits_reserve(account=job.account, wanted=wanted, reference=chunk.reference, note=note)
    chunk.reserved = held
    chunk.save(update_fields=["reserved"])
    if held < chunk.size:
        Job.objects.filter(pk=job.pk).update(partial=True)


def chunk_finish(*, chunk: Chunk, verdicts: Sequence[Verdict], part_name: str) -> bool:
    """Record the chunk's results and release its unused credits, if the chunk is still ours."""
    counts = Counter(verdict.status for verdict in verdicts)
    tallies = {
        "processed": len(verdicts),
        "valid": counts[Status.VALID],
        "invalid": counts[Status.INVALID],
        "risky": counts[Status.RISKY],
        "unknown": counts[Status.UNKNOWN],
    }
    with transaction.atomic():
        won = Chunk.objects.filter(pk=chunk.pk, state=Chunk.State.RUNNING, attempts=chunk.attempts).update(
            state=Chunk.State.DONE, lease_expires_at=None, part_name=part_name, **tallies
        )
        if not won:
            return False
        Job.objects.filter(pk=chunk.job_id).update(**{field: F(field) + n for field, n in tallies.items()})
        _breakdown_add(chunk.job_id, verdicts)
        unused = (chunk.reserved or 0) - len(verdicts)
        _chunk_release(chunk, unused, chunk.job)
    return True


def _breakdown_add(job_id: str, verdicts: Sequence[Verdict]) -> None:
    """Add the chunk's rows to the job's breakdown (under the job's row lock, taken by the UPDATE before)."""
    counts = Counter(verdict.sub_status.value for verdict in verdicts if verdict.sub_status)
    counts["free_provider"] = sum(verdict.checks.is_free_provider for verdict in verdicts)
    counts["did_you_mean"] = sum(verdict.did_you_mean is not None for verdict in verdicts)
    estimated = [verdict.deliverability for verdict in verdicts if verdict.deliverability]
    counts["catch_all_likely"] = sum(estimate.likely for estimate in estimated)
    counts["catch_all_unlikely"] = len(estimated) - counts["catch_all_likely"]
    counts.update(MAIL_PROVIDER_PREFIX + verdict.mail_provider for verdict in verdicts if verdict.mail_provider)
    job = Job.objects.select_for_update().only("breakdown").get(pk=job_id)
    job.breakdown = dict(Counter(job.breakdown) + counts)
    job.save(update_fields=["breakdown"])


def job_complete_if_done(*, job_id: str) -> bool:
    """Assemble the result and complete the job once no chunk is left; one caller wins."""
    if Chunk.objects.filter(job_id=job_id).exclude(state=Chunk.State.DONE).exists():
        return False
    if not Job.objects.filter(pk=job_id, status=Job.Status.PROCESSING).exists():
        return False
    parts = Chunk.objects.filter(job_id=job_id).exclude(part_name="").order_by("index")
    name = files.result_assemble(job_id, parts.values_list("part_name", flat=True))
    with transaction.atomic():
        won = Job.objects.filter(pk=job_id, status=Job.Status.PROCESSING).update(
            status=Job.Status.COMPLETED, result_name=name, completed_at=timezone.now()
        )
        delivery = None
        if won:
            delivery = callback_queue(job=Job.objects.get(pk=job_id), event="bulk.completed")
            # After the callback: the customer's columns are joined in a task of their own.
            queue.original_assembly_on_commit(job_id)
            transaction.on_commit(lambda: job_finished_mail(job_id=job_id))
    if not won:
        files.delete_quietly(name)
    if delivery is not None:  # now, not behind the bulk tasks queued before it (callbacks.callback_queue)
        callback_attempt(delivery_id=delivery.pk, number=1)
    return bool(won)


def job_fail(*, job_id: str, reason: str) -> bool:
    """Stop a job that cannot go on: release what its unfinished chunks hold, send bulk.failed."""
    with transaction.atomic():
        unfinished = _lock_unfinished(job_id)
        won = Job.objects.filter(pk=job_id, status__in=UNFINISHED).update(
            status=Job.Status.FAILED, failure_reason=reason[:255], completed_at=timezone.now()
        )
        if not won:
            return False
        job = Job.objects.select_related("account").get(pk=job_id)
        _release(job, unfinished)
        Chunk.objects.filter(pk__in=[chunk.pk for chunk in unfinished]).update(
            state=Chunk.State.CANCELLED, lease_expires_at=None, reserved=0
        )
        callback_queue(job=job, event="bulk.failed")
        transaction.on_commit(lambda: job_finished_mail(job_id=job_id))
    return True


def job_delete(*, account: Account, job_id: str, key_mode: str = KeyMode.LIVE) -> None:
    """Stop the job if it runs (unused reservations released, no callback), delete it and its files.

    The ledger keeps its entries (they name the job in `reference`, not by a foreign key). A
    worker on one of its chunks at this moment loses its finishing UPDATE and charges nothing.
    """
    job = Job.objects.seen_by(account=account, key_mode=key_mode).filter(pk=job_id).only("filename", "key_mode").first()
    if job is None:
        raise JobNotFound
    job.account = account
    with transaction.atomic():
        unfinished = _lock_unfinished(job_id)
        deleted, _ = Job.objects.filter(pk=job_id, account=account).delete()  # its chunks and callbacks too
        if not deleted:
            raise JobNotFound
        _release(job, unfinished)
        now = timezone.now()
        DeletedJob.objects.create(
            id=job_id, account=account, filename=job.filename, deleted_at=now, expires_at=now + DeletedJob.KEPT
        )
    files.job_files_delete(job_id)


def _lock_unfinished(job_id: str) -> list[Chunk]:
    """The job's chunks not done, locked: chunks before the job, in the order chunk_claim takes them."""
    return list(Chunk.objects.filter(job_id=job_id).exclude(state=Chunk.State.DONE).select_for_update())


def _release(job: Job, chunks: list[Chunk]) -> None:
    """Give back what these chunks hold (a chunk's reservation covers rows it never finished)."""
    for chunk in chunks:
        _chunk_release(chunk, chunk.reserved or 0, job)


def _chunk_release(chunk: Chunk, amount: int, job: Job) -> None:
    if job.key_mode == KeyMode.TEST:
        return  # a test job took nothing
    credits_release(account=job.account, amount=amount, reference=chunk.reference, note=chunk.ledger_note(job.filename))


def job_cancel(*, job_id: str) -> bool:
    """Staff stop a pending or processing job: it fails, its reservations are released.

    A chunk task that runs afterwards finds the job finished and neither claims nor charges;
    one running at this moment loses its finishing UPDATE (its chunk is cancelled).
    """
    return job_fail(job_id=job_id, reason=CANCELLED_BY_STAFF)


def job_retry(*, job_id: str) -> bool:
    """Staff run a failed job again: its undone chunks start over (attempts reset) and are queued."""
    now = timezone.now()
    with transaction.atomic():
        undone = Chunk.objects.filter(job_id=job_id).exclude(state=Chunk.State.DONE)
        locked = list(undone.select_for_update().values_list("pk", flat=True))  # chunks before the job
        started = Chunk.objects.filter(job_id=job_id, state=Chunk.State.DONE).exists()
        won = Job.objects.filter(pk=job_id, status=Job.Status.FAILED).update(
            status=Job.Status.PROCESSING if started else Job.Status.PENDING,
            failure_reason="",
            completed_at=None,
        )
        if not won:
            return False
        Chunk.objects.filter(pk__in=locked).update(
            state=Chunk.State.PENDING, attempts=0, lease_expires_at=None, reserved=None, queued_at=now
        )
        transaction.on_commit(lambda: scheduling.work_enqueue(scheduling.work_for_new_job(len(locked))))
    return True


def chunks_requeue_stale() -> int:
    """Queue work again for chunks nobody is working on: their worker died (lease expired), or every
    task that would run the waiting chunks was lost. Returns how many tasks it queued.

    Also finishes jobs whose every chunk is done but whose completion was interrupted.
    """
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS)
    expired = Chunk.objects.filter(
        state=Chunk.State.RUNNING, lease_expires_at__lt=now, queued_at__lt=cutoff, job__status__in=UNFINISHED
    )
    requeued = 0
    for chunk_id, queued_at in expired.values_list("pk", "queued_at")[:1000]:
        requeued += Chunk.objects.filter(pk=chunk_id, queued_at=queued_at).update(queued_at=now)
    if scheduling.work_stalled(now):
        requeued += settings.BULK_PARALLEL_CHUNKS
    scheduling.work_enqueue(requeued)
    stuck = Job.objects.filter(status=Job.Status.PROCESSING).exclude(chunks__state__in=["pending", "running"])
    for job_id in stuck.values_list("pk", flat=True):
        queue.job_completion(job_id)
    return requeued
