"""The bulk worker's loop: run chunk after chunk, each the one whose turn it is (jobs/fair_share.py),
and wait while the DNS resolver is broken. What one chunk goes through is jobs/chunk_runs.py; a job's
beginning and end, jobs/lifecycle.py."""

from __future__ import annotations

import os
import time

from django.conf import settings
from django.db import transaction

from jobs import deep_slots, fair_share
from jobs.chunk_runs import chunk_claim, chunk_process, chunks_process, waiting_for_resolver
from jobs.grouping import grouping_waiting, job_group_next
from jobs.models import Chunk
from lib import sql
from verification.resolver import resolver_last_finding


def chunk_run_next(*, budget: float) -> int:
    """Run chunks, each the one whose turn it is (jobs/fair_share.py), for up to `budget` seconds.

    Returns how many ran (at least one while any waits). One task goes on from chunk to chunk
    rather than one task a chunk: a round trip through the queue between chunks would leave the
    worker idle for the broker's poll interval. When the budget is spent and chunks still wait,
    it queues its successor and ends, so other tasks (callbacks, completions) get the worker in
    between. While the resolver is broken it claims only test keys' chunks, which ask no resolver:
    live work waits (`chunks_resume`).
    """
    deadline, ran = time.monotonic() + budget, 0
    while ran == 0 or time.monotonic() < deadline:  # at least one chunk a task: always progress
        sandbox_only = waiting_for_resolver()
        with deep_slots.deep_slot() as slot:
            # A large deep job's rows are ordered by MX address first (not while the resolver is broken).
            if slot.held and not sandbox_only and job_group_next():
                # Not counted as a chunk run, whatever the budget: this worker goes on to take the
                # job's first batch itself, with the deep slot and its hosts' addresses at hand
                # (verification/engine/mxhosts.py), rather than leave it to the next task.
                continue
            chunk = _claim_next(deep=slot.held, sandbox_only=sandbox_only)
            if chunk is None:
                return ran  # nothing waiting (for this worker), or every pick taken by other workers, which go on
            batch = [chunk]
            if fair_share.is_slow(chunk.job):  # its batch mates, grouped by MX address with it
                batch.extend(filter(None, (chunk_claim(chunk_id=pk) for pk in fair_share.deep_batch(chunk))))
            else:
                slot.give_back()  # a fast chunk: another worker may take deep work meanwhile
            chunks_process(batch)
        ran += len(batch)
        sql.wal_checkpoint()  # the worker pays for the write-ahead log's copying, not a verification
        os.sched_yield()  # let the web in between chunks
    if fair_share.work_waiting() or grouping_waiting():
        fair_share.work_enqueue(1)
    return ran


# Picks taken by quicker workers before this one's claim: how many times to pick again.
PICK_ROUNDS = 3


def _claim_next(*, deep: bool, sandbox_only: bool = False) -> Chunk | None:
    """The chunk whose turn it is, claimed. Workers woken together pick the same chunk; the losers
    of a fast job's take its next chunks (chunk_runs._sibling_take), and the losers of a deep
    job's pick again: that batch is now held, so they take the job's next batch. Without it the
    job's batches ran one after the other, on the one worker that won the first claim."""
    for _ in range(PICK_ROUNDS):
        picks = fair_share.chunk_pick(deep=deep, sandbox_only=sandbox_only)
        for chunk_id in picks:
            chunk = chunk_claim(chunk_id=chunk_id)
            if chunk is not None:
                return chunk
        if not picks:
            return None
        _claims_settled(picks)
    return None


def _claims_settled(chunk_ids: list[int]) -> None:
    """Wait until the quicker workers' claims of these chunks are committed: on PostgreSQL a claim
    under way is skipped at once (chunk_runs._take), and picked again before its commit it would
    be lost again, the batch not yet seen as held. On SQLite a claim lost was already committed."""
    with transaction.atomic():
        list(Chunk.objects.select_for_update().filter(pk__in=chunk_ids).values_list("pk", flat=True))


def chunk_run(*, chunk_id: int) -> None:
    """Claim this chunk, verify its addresses, record the result. Safe to call any number of times."""
    if waiting_for_resolver() and not Chunk.objects.filter(fair_share.SANDBOX_CHUNKS, pk=chunk_id).exists():
        return
    chunk = chunk_claim(chunk_id=chunk_id)
    if chunk is not None:
        chunk_process(chunk)


def jobs_wait_for_resolver() -> bool:
    """Whether unfinished live jobs wait for the DNS resolver now: the last canary check found it
    broken, and workers claim none of their chunks until a check finds it working (a test key's job
    goes on). Reads the shared finding, asks no DNS: for the job page and the job API, which say why
    a job is not moving."""
    health = resolver_last_finding()
    return health is not None and health.broken


def chunks_resume() -> None:
    """Bulk work stopped for a broken resolver goes on, as many chunks at once as a new job's."""
    if not waiting_for_resolver():
        fair_share.work_enqueue(settings.BULK_PARALLEL_CHUNKS)
