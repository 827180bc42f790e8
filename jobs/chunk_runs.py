"""A bulk chunk's state machine: claimed (lease, attempt, credits reserved), verified, then
finished (results recorded, unused credits released), deferred (greylisted rows asked again
later), or put back (judged by a broken resolver). The worker loop is jobs/worker.py; the job's
completion, failure and deletion jobs/lifecycle.py.

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
import time
from collections import Counter
from collections.abc import Sequence
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import KeyMode
from billing.services import credits_reserve
from jobs import fair_share, files, queue
from jobs.fair_share import UNFINISHED
from jobs.grouping import grouping_stalled
from jobs.lifecycle import chunk_release, job_complete_if_done, job_fail
from jobs.models import MAIL_PROVIDER_PREFIX, Chunk, Job
from lib import metrics, sql
from lib.address_keys import remembered
from lib.deferred import deferred
from lib.garbage import collector_paused
from verification.deep import deep_verify_many, is_asked_again
from verification.egresses import egresses_of_region
from verification.engine import Status, SubStatus, Verdict, verify_many
from verification.engine.core import with_second_chance
from verification.engine.egress import Egress
from verification.engine.modes import ValidationMode
from verification.engine.reasons import counted_under
from verification.engine.sandbox import sandbox_verdicts
from verification.guarantee import valid_answers_batch
from verification.judging import is_free, region_closed, rows_judged_unless_objected
from verification.outcomes import verdicts_with_feedback
from verification.resolver import answers_withheld, domain_lookup, resolver_broken

logger = logging.getLogger(__name__)

# A deep chunk with greylisted (4xx) rows is run again this many times before they stay `unknown`.
DEEP_RETRY_ROUNDS = 3
# A chunk whose claim has been taken this many times without finishing has crashed
# its workers three times: the job fails rather than crash a fourth.
MAX_CHUNK_ATTEMPTS = 3


def chunk_process(chunk: Chunk) -> None:
    chunks_process([chunk])


def chunks_process(batch: Sequence[Chunk]) -> None:
    """Verify claimed chunks of one job together, then settle each on its own (finished, deferred
    or put back). A live deep job's worker takes a batch of its chunks (`fair_share.deep_batch`),
    so their rows are grouped by MX address across the batch; any other chunk comes alone. The
    cyclic garbage collector waits meanwhile (lib/garbage.py), and the shared stores' writes of what
    mail servers answered wait until the chunks are settled and the job completed (lib/deferred.py);
    each row's address key is computed once (lib/address_keys.py `remembered`)."""
    with collector_paused(), remembered(), deferred():
        _chunks_process(batch)


def _chunks_process(batch: Sequence[Chunk]) -> None:
    job = batch[0].job
    if crashed := next((chunk for chunk in batch if chunk.attempts > MAX_CHUNK_ATTEMPTS), None):
        job_fail(job_id=job.pk, reason=f"Chunk {crashed.index} crashed {MAX_CHUNK_ATTEMPTS} times.")
        return
    try:
        rows = [files.input_rows(job.chunks_folder, chunk.index, chunk.reserved or 0) for chunk in batch]
    except OSError:
        logger.exception("job %s: input file unreadable", job.pk)
        job_fail(job_id=job.pk, reason="The uploaded file could not be read.")
        return
    emails = [email for chunk_rows in rows for email in chunk_rows]
    deep = job.validation_mode == ValidationMode.DEEP
    egresses = egresses_of_region(job.account.probe_region) if deep else None
    sandbox = job.key_mode == KeyMode.TEST  # the sandbox asks no resolver and no mail server
    with answers_withheld() as withheld:
        if sandbox:
            verdicts = sandbox_verdicts(emails)
        else:
            verdicts = _verdicts(emails, deep=deep, egresses=egresses, probe_day=job.created_at.date())
    # Fast and deep chunks alike; never the sandbox's, whose `unknown` rows are made up, not DNS's.
    if not sandbox and (withheld or _failed_while_broken(verdicts, since=time.time())):
        for chunk in batch:
            chunk_put_back(chunk=chunk)
        metrics.verdicts_withheld(len(verdicts), source="bulk")
        waiting_for_resolver()
        return
    start = 0
    for chunk, chunk_rows in zip(batch, rows, strict=True):
        _chunk_settle(chunk, verdicts[start : start + len(chunk_rows)], egresses)
        start += len(chunk_rows)
    job_complete_if_done(job_id=job.pk)


def _chunk_settle(chunk: Chunk, verdicts: list[Verdict], egresses: tuple[Egress, ...] | None = None) -> None:
    """Finish the chunk with its verdicts, or defer it when it holds greylisted rows to ask again
    (not the sandbox's: it would answer the same)."""
    if (
        fair_share.is_slow(chunk.job)
        and chunk.retry_round < DEEP_RETRY_ROUNDS
        and any(is_asked_again(v) for v in verdicts)
    ):
        chunk_defer(chunk=chunk)
        return
    if chunk.job.key_mode != KeyMode.TEST:
        verdicts = verdicts_with_feedback(account_id=chunk.job.account_id, verdicts=verdicts)
    part = files.part_save(chunk.job_id, chunk.index, chunk.attempts, verdicts) if verdicts else ""
    charged = [verdict for verdict in verdicts if not (is_free(verdict) or region_closed(verdict, egresses))]
    if not chunk_finish(chunk=chunk, verdicts=verdicts, part_name=part, charged=charged):
        files.delete_quietly(part)
        return
    metrics.bulk_rows_counted(verdict.status for verdict in verdicts)


def _verdicts(emails: list[str], *, deep: bool, egresses: tuple[Egress, ...] | None, probe_day: date) -> list[Verdict]:
    """The chunk's verdicts; DNS through the strict, trust-checked lookup in both modes. A deep
    job's rows are asked with the catch-all probes of `probe_day`, the day it began, so its
    greylisted rows asked again after midnight ask the probe greylisting has seen."""
    if not emails:
        return []
    lookup = domain_lookup(strict=True)
    if deep:
        seconds = settings.BULK_CHUNK_LEASE_SECONDS / 2
        judge = functools.partial(
            deep_verify_many, seconds=seconds, lookup=lookup, egresses=egresses, probe_day=probe_day
        )
        return rows_judged_unless_objected(emails, judge, mode=ValidationMode.DEEP)
    return rows_judged_unless_objected(
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


def waiting_for_resolver() -> bool:
    """True while the resolver is broken; bulk work then goes on by itself once it recovers."""
    if not resolver_broken():
        return False
    queue.chunk_work_resumed(when=timezone.now() + timedelta(seconds=settings.VERIFIER_DNS_CANARY_SECONDS))
    return True


def chunk_put_back(*, chunk: Chunk) -> bool:
    """A chunk judged by a broken resolver waits again as if never claimed: its verdicts are dropped,
    its credits released, its attempt not counted (a broken resolver is no crash)."""
    with transaction.atomic():
        won = Chunk.objects.filter(pk=chunk.pk, state=Chunk.State.RUNNING, attempts=chunk.attempts).update(
            state=Chunk.State.PENDING, attempts=F("attempts") - 1, lease_expires_at=None, reserved=None
        )
        if won:
            chunk_release(chunk, chunk.reserved or 0, chunk.job)
    return bool(won)


def chunk_claim(*, chunk_id: int) -> Chunk | None:
    """Take the chunk's lease (pending, or running with an expired lease) and its credits."""
    now = timezone.now()
    with transaction.atomic():
        if not _take(chunk_id, now):
            taken = _sibling_take(chunk_id, now)  # another worker was quicker: the same job's next chunk
            if taken is None:
                return None
            chunk_id = taken
        chunk = Chunk.objects.get(pk=chunk_id)  # its job is read next, locked
        # Locks in one order everywhere (chunk, job, account), so PostgreSQL never deadlocks.
        chunk.job = Job.objects.select_for_update().select_related("account").get(pk=chunk.job_id)
        sql.execute(_SERVED_SQL, [sql.db_datetime(now), chunk.job_id])  # its account's turn is taken
        if chunk.attempts <= MAX_CHUNK_ATTEMPTS:
            if chunk.job.status == Job.Status.PENDING:  # read under the job's lock
                Job.objects.filter(pk=chunk.job_id).update(status=Job.Status.PROCESSING, started_at=now)
            if chunk.reserved is None:
                _reserve(chunk)
    return chunk


_SERVED_SQL = f"UPDATE {fair_share.JOBS} SET served_at = %s WHERE id = %s"
_RESERVED_SQL = f"UPDATE {fair_share.CHUNKS} SET reserved = %s WHERE id = %s"


def _take(chunk_id: int, now: datetime) -> bool:
    """The conditional UPDATE that claims a chunk: True if this worker won it. Written out, as the
    pick is (jobs/fair_share.py)."""
    # The chunk's own conditions stay on the UPDATE itself, not in a subquery (as a join with the
    # job would put them): PostgreSQL re-checks only those after waiting for a row another worker
    # was claiming, so each waiter would claim the chunk again.
    claimable = f"{fair_share.TAKEABLE_SQL} AND c.id = %(id)s"
    values = {"now": sql.db_datetime(now), "id": chunk_id}
    if connection.features.has_select_for_update_skip_locked and not sql.fetch_one(
        f"SELECT c.id FROM {fair_share.CHUNKS} c WHERE {claimable} FOR UPDATE SKIP LOCKED", values
    ):
        return False  # another worker is claiming it: rather than wait for its commit (and lose), go on
    lease = now + timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS)
    return bool(
        sql.execute(
            f"UPDATE {fair_share.CHUNKS} AS c SET state = '{Chunk.State.RUNNING}', attempts = attempts + 1,"
            f" lease_expires_at = %(lease)s WHERE {claimable}",
            values | {"lease": sql.db_datetime(lease)},
        )
    )


def _sibling_take(chunk_id: int, now: datetime) -> int | None:
    """A chunk of the same fast job in place of `chunk_id`, which another worker claimed first; None
    when another account's work waits (its turn: the worker takes its next pick) or none is left.

    Every idle worker picks the fairest chunk, so on one job's backlog the workers all pick the same
    one: without this, all but one would find nothing and end their task, and the job would run on
    one worker (docs/bulk.md, "Many customers at once"). Deep jobs keep their own scheduling.
    """
    waiting = f"{fair_share.CHUNKS_OF_UNFINISHED} WHERE {fair_share.CLAIMABLE_SQL}"
    values = {"now": sql.db_datetime(now), "id": chunk_id, "count": settings.BULK_PARALLEL_CHUNKS}
    job = sql.fetch_one(
        f"SELECT j.id, j.account_id FROM {fair_share.CHUNKS_OF_UNFINISHED}"
        f" WHERE c.id = %(id)s AND NOT ({fair_share.SLOW_SQL})",
        values,
    )
    if job is None:  # finished, or a deep job
        return None
    values |= {"job": job[0], "account": job[1]}
    if sql.fetch_one(f"SELECT 1 FROM {waiting} AND j.account_id <> %(account)s LIMIT 1", values):
        return None
    candidates = sql.fetch_all(
        f'SELECT c.id FROM {waiting} AND c.job_id = %(job)s ORDER BY c."index" LIMIT %(count)s', values
    )
    return next((pk for (pk,) in candidates if _take(pk, now)), None)


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
    sql.execute(_RESERVED_SQL, [held, chunk.pk])
    if held < chunk.size:
        Job.objects.filter(pk=job.pk).update(partial=True)


def chunk_finish(
    *, chunk: Chunk, verdicts: Sequence[Verdict], part_name: str, charged: Sequence[Verdict] | None = None
) -> bool:
    """Record the chunk's results and release its unused credits, if the chunk is still ours. Only the
    `charged` rows (None: all) cost a credit: the others' go back in the same release
    (verification/judging.py `is_free`, `region_closed`); the charged valid ones are kept for the bounce
    guarantee, in one packed row filed after the job completes (verification/guarantee.py)."""
    charged = verdicts if charged is None else charged
    counts = Counter(verdict.status for verdict in verdicts)
    tallies = {"processed": len(verdicts)} | {status.value: counts[status] for status in Status}
    breakdown = _breakdown(verdicts)
    with transaction.atomic():
        if not _finish(chunk, part_name, tallies):
            return False
        _job_add(chunk.job_id, tallies, breakdown)
        if chunk.job.key_mode != KeyMode.TEST:
            valid_answers_batch(account_id=chunk.job.account_id, verdicts=charged)
        unused = (chunk.reserved or 0) - len(charged)
        chunk_release(chunk, unused, chunk.job)
    return True


# A chunk's finishing statements, written out (lib/sql.py) as its claim's are: the ORM compiled them
# afresh for every chunk. TALLIES: a chunk's counts (its rows, then a column per verdict status), each
# added to its job's column of the same name.
TALLIES = ("processed", *(status.value for status in Status))
_FINISH_SQL = (
    f"UPDATE {fair_share.CHUNKS} SET state = '{Chunk.State.DONE}', lease_expires_at = NULL, part_name = %(part)s, "
    + ", ".join(f"{name} = %({name})s" for name in TALLIES)
    + f" WHERE id = %(id)s AND state = '{Chunk.State.RUNNING}' AND attempts = %(attempts)s"
)
_JOB_ADD_SQL = (
    f"UPDATE {fair_share.JOBS} SET "
    + ", ".join(f"{name} = {name} + %({name})s" for name in TALLIES)
    + ", breakdown = %(breakdown)s WHERE id = %(id)s"
)


def _finish(chunk: Chunk, part_name: str, tallies: dict[str, int]) -> bool:
    """The chunk done with its tallies, if its lease is still this attempt's (else another worker
    took it over: nothing of this run counts)."""
    values = {"id": chunk.pk, "attempts": chunk.attempts, "part": part_name, **tallies}
    return bool(sql.execute(_FINISH_SQL, values))


def _job_add(job_id: str, tallies: dict[str, int], breakdown: Counter[str]) -> None:
    """Add a chunk's tallies and breakdown to its job's, under the job's row lock (taken here on
    PostgreSQL; SQLite's write lock is the transaction's)."""
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    row = sql.fetch_one(f"SELECT breakdown FROM {fair_share.JOBS} WHERE id = %s{lock}", [job_id])
    assert row is not None, f"job {job_id} of a chunk being finished"
    total = dict(Counter(sql.from_json(row[0]) or {}) + breakdown)
    sql.execute(_JOB_ADD_SQL, {"id": job_id, "breakdown": sql.db_json(total), **tallies})


def _breakdown(verdicts: Sequence[Verdict]) -> Counter[str]:
    """A chunk's rows in the job's breakdown (docs/bulk.md, "Poll"): by sub_status, flags, estimates, providers."""
    counts = Counter(filter(None, (counted_under(verdict.sub_status, verdict.did_you_mean) for verdict in verdicts)))
    counts["free_provider"] = sum(verdict.checks.is_free_provider for verdict in verdicts)
    counts["did_you_mean"] = sum(verdict.did_you_mean is not None for verdict in verdicts)
    estimated = [verdict.deliverability for verdict in verdicts if verdict.deliverability]
    counts["catch_all_likely"] = sum(estimate.likely for estimate in estimated)
    counts["catch_all_unlikely"] = len(estimated) - counts["catch_all_likely"]
    counts.update(MAIL_PROVIDER_PREFIX + verdict.mail_provider for verdict in verdicts if verdict.mail_provider)
    return counts


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
    if fair_share.work_stalled(now):
        requeued += settings.BULK_PARALLEL_CHUNKS
    if grouping_stalled(now):  # a large deep job waits to be grouped, and its task was lost
        requeued += 1
    fair_share.work_enqueue(requeued)
    stuck = Job.objects.filter(status=Job.Status.PROCESSING).exclude(chunks__state__in=["pending", "running"])
    for job_id in stuck.values_list("pk", flat=True):
        queue.job_completion(job_id)
    return requeued
