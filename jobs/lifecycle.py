"""A bulk job's lifecycle: it completes once no chunk is left (the result assembled, the callback
sent), fails when it cannot go on (staff may cancel or retry it), or is deleted. Each step releases
what the job's unfinished chunks hold, under the same row locks the claims take."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import Account, KeyMode
from billing import queue as billing_queue
from billing.services import credits_refund, credits_release
from jobs import fair_share, files, queue
from jobs.callbacks import callback_attempt, callback_queue
from jobs.downloads import JobNotFound
from jobs.fair_share import UNFINISHED
from jobs.models import Chunk, DeletedJob, Job
from jobs.notifications import job_finished_mail
from lib import sql

CANCELLED_BY_STAFF = "cancelled by staff"
REFUND_REASON = "unknown_rows_refunded"  # the refund's ledger reference: "<job id>:unknown_rows_refunded"


# A processing job none of whose chunks is left to run.
_DONE_SQL = (
    f"SELECT 1 FROM {fair_share.JOBS} j WHERE j.id = %(id)s AND j.status = '{Job.Status.PROCESSING}'"
    f" AND NOT EXISTS (SELECT 1 FROM {fair_share.CHUNKS} c WHERE c.job_id = j.id AND c.state <> '{Chunk.State.DONE}')"
)


def job_complete_if_done(*, job_id: str) -> bool:
    """Assemble the result and complete the job once no chunk is left; one caller wins."""
    if not sql.fetch_one(_DONE_SQL, {"id": job_id}):  # every chunk's worker asks: written out (lib/sql.py)
        return False
    parts = Chunk.objects.filter(job_id=job_id).exclude(part_name="").order_by("index")
    grouped, total = Job.objects.values_list("grouped_name", "total").get(pk=job_id)
    name = files.result_assemble(job_id, parts.values_list("index", "part_name"), grouped=grouped, total=total)
    with transaction.atomic():
        won = Job.objects.filter(pk=job_id, status=Job.Status.PROCESSING).update(
            status=Job.Status.COMPLETED, result_name=name, completed_at=timezone.now()
        )
        delivery = None
        if won:
            job = Job.objects.select_related("account").get(pk=job_id)
            _unknown_rows_refund(job)
            delivery = callback_queue(job=job, event="bulk.completed")
            # After the callback: the customer's columns are joined in a task of their own, and the
            # chunks' valid answers filed for the bounce guarantee in another.
            queue.original_assembly_on_commit(job_id)
            if job.key_mode != KeyMode.TEST:
                billing_queue.answers_filing_on_commit(job.account_id)
            transaction.on_commit(lambda: job_finished_mail(job_id=job_id))
    if not won:
        files.delete_quietly(name)
    if delivery is not None:  # now, not behind the bulk tasks queued before it (callbacks.callback_queue)
        callback_attempt(delivery_id=delivery.pk, number=1)
    return bool(won)


def _unknown_rows_refund(job: Job) -> None:
    """Where unknowns are free (VERIFIER_CHARGE_UNKNOWN=0), credit back the rows that ended `unknown`:
    one ledger entry for the job, in the transaction its completion won, so it is made exactly once."""
    if settings.VERIFIER_CHARGE_UNKNOWN or job.key_mode == KeyMode.TEST or not job.unknown:
        return
    note = f"{job.unknown} unknown rows of {job.filename or job.pk} credited back"
    credits_refund(account=job.account, amount=job.unknown, reference=f"{job.pk}:{REFUND_REASON}", note=note)
    Job.objects.filter(pk=job.pk).update(credits_refunded=job.unknown)
    job.credits_refunded = job.unknown


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
        chunk_release(chunk, chunk.reserved or 0, job)


def chunk_release(chunk: Chunk, amount: int, job: Job) -> None:
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
        transaction.on_commit(lambda: fair_share.work_enqueue(fair_share.work_for_new_job(len(locked))))
        # failed before its rows were grouped (jobs/grouping.py): no chunks yet, a deep worker groups it
        if Job.objects.filter(pk=job_id, grouping=Job.Grouping.DUE).update(grouping_claimed_at=None):
            transaction.on_commit(lambda: fair_share.work_enqueue(1))
    return True
