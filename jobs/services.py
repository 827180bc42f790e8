"""Bulk jobs: create, process chunk by chunk, complete or fail.

The database is the source of truth. A chunk is claimed with a conditional
UPDATE that takes a lease and counts the attempt; its credits are reserved in
the claim's transaction and recorded on the chunk, so a re-run reuses them. A
chunk's results count (and are charged) only if its finishing UPDATE still
finds it leased to the same attempt. A worker killed at any point therefore
costs at most a re-run of one chunk, never a second charge.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_q.tasks import async_task

from accounts.models import Account
from api.models import IdempotencyRecord
from api.renderers import JSON_CONTENT_TYPE, render_json
from billing.services import credits_release, credits_require, credits_reserve
from jobs import files, scheduling
from jobs.callbacks import callback_attempt, callback_queue
from jobs.csvfile import MAX_ROWS, MAX_UPLOAD_BYTES, AddressList, CsvFileError, read_list
from jobs.models import MAIL_PROVIDER_PREFIX, Chunk, Job, new_job_id
from jobs.scheduling import UNFINISHED
from lib import metrics, outbound, sql
from lib.errors import DomainError
from verification.engine import Status, Verdict, verify_many
from verification.engine.core import with_second_chance
from verification.engine.syntax import parse
from verification.models import DomainRecord
from verification.resolver import domain_lookup

logger = logging.getLogger(__name__)

# A chunk whose claim has been taken this many times without finishing has crashed
# its workers three times: the job fails rather than crash a fourth.
MAX_CHUNK_ATTEMPTS = 3
CANCELLED_BY_STAFF = "cancelled by staff"


class BulkNotInPlan(DomainError):
    code = "plan_upgrade_required"
    message = "Bulk verification needs the Starter plan or above."


class PartialNotConfirmed(DomainError):
    """The portal asks before it runs a list the balance covers only in part; the API does not."""

    param = "confirm_partial"
    message = "Confirm that only part of the list will be verified, or add credits."


class UploadRefused(DomainError):
    """The upload itself is unusable: invalid_file, file_too_large, too_many_rows or invalid_callback_url."""

    param = "file"


@dataclass(frozen=True)
class Submission:
    """An accepted upload: the job and what its submitter was told."""

    job: Job
    estimated_seconds: int

    def receipt(self) -> dict[str, object]:
        job = self.job
        return {
            "id": job.pk,
            "status": job.status,
            "total_emails": job.total,
            "estimated_seconds": self.estimated_seconds,
        }


def bulk_in_plan(*, account: Account) -> None:
    """Bulk needs the Starter plan or above (an upload and its preview both ask)."""
    if not account.plan.allows_bulk:
        raise BulkNotInPlan


def file_too_large() -> UploadRefused:
    return UploadRefused(f"The file is larger than {MAX_UPLOAD_BYTES // 2**20} MB.", code="file_too_large")


def _invalid_file(message: str) -> UploadRefused:
    return UploadRefused(message, code="invalid_file")


def _checked_file(upload: object) -> UploadedFile:
    if not isinstance(upload, UploadedFile):
        raise _invalid_file("Send the CSV file as the multipart part 'file'.")
    if upload.size is not None and upload.size > MAX_UPLOAD_BYTES:
        raise file_too_large()
    if not upload.size:
        raise _invalid_file("The file is empty.")
    return upload


def _checked_callback_url(url: object) -> str:
    def refused(message: str) -> UploadRefused:
        return UploadRefused(message, "callback_url", code="invalid_callback_url")

    if not isinstance(url, str):
        raise refused("callback_url must be a URL.")
    if len(url) > 2000:
        raise refused("callback_url is longer than 2000 characters.")
    if url:
        try:
            outbound.check_url(url)
        except outbound.UnsafeUrl as error:
            raise refused(str(error)) from None
    return url


def job_submit(
    *,
    account: Account,
    upload: object,
    callback_url: object,
    email_column: str | None = None,
    idempotency: IdempotencyRecord | None = None,
    partial_ok: bool = True,
) -> Submission:
    """Check an upload and create its job. The API and the portal both come in here.

    Refusals, in the contract's order: plan, balance, file, callback URL, then the file's
    rows, then (`partial_ok=False`, the portal's) a balance below the list's addresses.
    Each is a DomainError that changes nothing; the portal shows it on its field.
    """
    bulk_in_plan(account=account)
    credits_require(account=account, amount=1)
    found, url = upload_check(upload=upload, callback_url=callback_url, email_column=email_column)
    if not partial_ok and account.credit_balance < len(found.addresses):
        raise PartialNotConfirmed
    return job_create(
        account=account, found=found, callback_url=url, filename=upload_filename(upload), idempotency=idempotency
    )


def upload_check(*, upload: object, callback_url: object, email_column: str | None) -> tuple[AddressList, str]:
    """The file, the callback URL, then the file's rows (for the upload and its preview). Raises UploadRefused."""
    checked, url = _checked_file(upload), _checked_callback_url(callback_url)
    try:
        found = read_list(checked.file, email_column=email_column, max_rows=MAX_ROWS)  # type: ignore[arg-type]
    except CsvFileError as error:
        raise UploadRefused(error.message, error.param, code=error.code) from None
    return found, url


def upload_filename(upload: object) -> str | None:
    """The file's base name (any client-side folder dropped), at most 255 characters."""
    raw = upload.name if isinstance(upload, UploadedFile) else None
    name = PurePosixPath((raw or "").replace("\\", "/")).name
    return "".join(char for char in name if char.isprintable())[:255] or None  # no NUL, controls or surrogates


def job_create(
    *,
    account: Account,
    found: AddressList,
    callback_url: str,
    filename: str | None = None,
    idempotency: IdempotencyRecord | None = None,
) -> Submission:
    """Store the addresses, create the job and its chunks, queue the chunks on commit.

    The idempotency record (if any) gets the submission's receipt in the same transaction.
    If anything fails, the stored file is deleted: nothing is left behind.
    """
    job_id, chunk_size = new_job_id(), chunk_size_for(len(found.addresses))
    name = files.input_save(job_id, found.addresses, found.originals, chunk_size)
    try:
        with transaction.atomic():
            job = Job.objects.create(
                id=job_id,
                account=account,
                callback_url=callback_url,
                input_name=name,
                total=len(found.addresses),
                filename=filename,
                columns=found.columns,
            )
            Chunk.objects.bulk_create(_chunks_for(job, chunk_size))
            submission = Submission(job, estimated_seconds(job.total, addresses=found.addresses))
            if idempotency is not None:
                idempotency.complete(status=202, body=render_json(submission.receipt()), headers=receipt_headers(job))
            tasks = scheduling.work_for_new_job(job.chunks.count())
            transaction.on_commit(lambda: scheduling.work_enqueue(tasks))
    except BaseException:
        files.input_delete(name)
        raise
    return submission


# A small list still runs in several chunks, so its progress moves rather than jumping from 0 to 100%.
SMALL_JOB_CHUNKS = 10
MIN_CHUNK_SIZE = 25


def chunk_size_for(total: int) -> int:
    """BULK_CHUNK_SIZE, or smaller for a list of fewer than SMALL_JOB_CHUNKS chunks of it."""
    return min(settings.BULK_CHUNK_SIZE, max(MIN_CHUNK_SIZE, -(-total // SMALL_JOB_CHUNKS)))


def receipt_headers(job: Job) -> dict[str, str]:
    return {"Content-Type": JSON_CONTENT_TYPE, "Location": f"/v1/jobs/{job.pk}"}


def _chunks_for(job: Job, size: int) -> list[Chunk]:
    return [
        Chunk(job=job, index=index, size=min(size, job.total - start))
        for index, start in enumerate(range(0, job.total, size))
    ]


def chunk_run_next(*, budget: float) -> int:
    """Run chunks, each the one whose turn it is (jobs/scheduling.py), for up to `budget` seconds.

    Returns how many ran (at least one while any waits). One task goes on from chunk to chunk
    rather than one task a chunk: a round trip through the queue between chunks would leave the
    worker idle for the broker's poll interval. When the budget is spent and chunks still wait,
    it queues its successor and ends, so other tasks (callbacks, completions) get the worker in
    between.
    """
    deadline, ran = time.monotonic() + budget, 0
    while ran == 0 or time.monotonic() < deadline:  # at least one chunk a task: always progress
        chunk = _claim_next()
        if chunk is None:
            return ran  # nothing waiting, or every pick taken by other workers, which go on
        _process(chunk)
        ran += 1
        sql.wal_checkpoint()  # the worker pays for the write-ahead log's copying, not a verification
        os.sched_yield()  # let the web in between chunks
    if scheduling.work_waiting():
        scheduling.work_enqueue(1)
    return ran


def _claim_next() -> Chunk | None:
    for chunk_id in scheduling.chunk_pick():
        chunk = chunk_claim(chunk_id=chunk_id)
        if chunk is not None:
            return chunk
    return None


def chunk_run(*, chunk_id: int) -> None:
    """Claim this chunk, verify its addresses, record the result. Safe to call any number of times."""
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
    verdicts = verify_many(emails, with_second_chance(domain_lookup())) if emails else []
    part = files.part_save(chunk.job_id, chunk.index, chunk.attempts, verdicts) if verdicts else ""
    if not chunk_finish(chunk=chunk, verdicts=verdicts, part_name=part):
        files.delete_quietly(part)
        return
    metrics.bulk_rows_counted(verdict.status for verdict in verdicts)
    job_complete_if_done(job_id=chunk.job_id)


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
    held, _ = credits_reserve(account=job.account, wanted=wanted, reference=chunk.reference)
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
        credits_release(account=chunk.job.account, amount=unused, reference=chunk.reference)
    return True


def _breakdown_add(job_id: str, verdicts: Sequence[Verdict]) -> None:
    """Add the chunk's rows to the job's breakdown (under the job's row lock, taken by the UPDATE before)."""
    counts = Counter(verdict.sub_status.value for verdict in verdicts if verdict.sub_status)
    counts["free_provider"] = sum(verdict.checks.is_free_provider for verdict in verdicts)
    counts["did_you_mean"] = sum(verdict.did_you_mean is not None for verdict in verdicts)
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
            # After the callback: the customer's columns are joined in a task of their own, off the job's clock.
            transaction.on_commit(lambda: async_task("jobs.tasks.assemble_original", job_id))
    if not won:
        files.delete_quietly(name)
    if delivery is not None:  # now, not behind the bulk tasks queued before it (callbacks.callback_queue)
        callback_attempt(delivery_id=delivery.pk, number=1)
    return bool(won)


def job_fail(*, job_id: str, reason: str) -> bool:
    """Stop a job that cannot go on: release what its unfinished chunks hold, send bulk.failed."""
    with transaction.atomic():
        unfinished = Chunk.objects.filter(job_id=job_id).exclude(state=Chunk.State.DONE)
        locked = list(unfinished.select_for_update())  # chunks before the job, as chunk_claim does
        won = Job.objects.filter(pk=job_id, status__in=UNFINISHED).update(
            status=Job.Status.FAILED, failure_reason=reason[:255], completed_at=timezone.now()
        )
        if not won:
            return False
        job = Job.objects.select_related("account").get(pk=job_id)
        for chunk in locked:
            credits_release(account=job.account, amount=chunk.reserved or 0, reference=chunk.reference)
        unfinished.update(state=Chunk.State.CANCELLED, lease_expires_at=None, reserved=0)
        callback_queue(job=job, event="bulk.failed")
    return True


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
        async_task("jobs.tasks.complete_job", job_id)
    return requeued


# The throughput behind `estimated_seconds`: the most recently completed jobs, and among them
# those large enough that their time is rows, not the fixed cost of picking a job up.
RECENT_JOBS = 20
THROUGHPUT_MIN_ROWS = 1_000


def estimated_seconds(total: int, *, addresses: Sequence[str] = ()) -> int:
    """From the throughput of the most recently completed jobs (rows per second), at least 1,
    and never less than a rate-capped resolver needs for the addresses' domains.

    Weighted by rows (all rows over all seconds), from the large ones when there are any: a
    one-row job takes a second of queue pickup, which says nothing about a 50,000-row list.
    """
    return max(_seconds_at_recent_rate(total), _seconds_at_max_qps(addresses))


def _seconds_at_recent_rate(total: int) -> int:
    recent = Job.objects.filter(
        status=Job.Status.COMPLETED, processed__gt=0, started_at__isnull=False, completed_at__isnull=False
    ).order_by("-completed_at")
    timings = [
        (processed, max((completed - started).total_seconds(), 0.1))
        for processed, started, completed in recent.values_list("processed", "started_at", "completed_at")[:RECENT_JOBS]
        if started and completed  # never None here (filtered above), but the types cannot know
    ]
    timings = [t for t in timings if t[0] >= THROUGHPUT_MIN_ROWS] or timings
    rows, seconds = sum(t[0] for t in timings), sum(t[1] for t in timings)
    rate = rows / seconds if rows else settings.BULK_DEFAULT_ROWS_PER_SECOND
    return max(1, round(total / rate))


def _seconds_at_max_qps(addresses: Sequence[str]) -> int:
    """With VERIFIER_DNS_MAX_QPS, a job cannot finish before one query for each domain not cached
    has been sent at that rate: a recent job on cached or fewer domains says nothing about it."""
    max_qps = settings.VERIFIER_DNS_MAX_QPS
    if max_qps <= 0 or not addresses:
        return 0
    domains = {parsed.ascii_domain for address in addresses if (parsed := parse(address))}
    uncached = len(domains) - len(DomainRecord.objects.get_many(domains))
    return math.ceil(uncached / max_qps)
