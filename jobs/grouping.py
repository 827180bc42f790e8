"""A large deep job's rows, ordered by MX address before it runs (docs/deep.md, "Bulk jobs").

A deep worker verifies a batch of a job's chunks together, up to BULK_DEEP_BATCH_ROWS rows, and
each MX address gets the sessions its recipients in the batch need. Cut in upload order, a job
larger than a batch would have an address's recipients in every batch, each opening sessions of
its own. So such a job (live, deep, more rows than a batch) gets no chunks at upload: a task
first resolves all its domains and their MX hosts' addresses, deals each address's rows whole
into batches, and only then creates the chunks, each recording its batch. The chunks' files say
where each row came from, and the result files put the rows back in input order (jobs/files.py).

The task may run twice (its worker died, and the stale-work sweep queued it again): each run
writes a folder of its own, and the one that records its folder on the job, while the job still
waits for it, creates the chunks; the other deletes its folder.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from jobs import fair_share, files, queue
from jobs.lifecycle import job_fail
from jobs.models import Chunk, Job
from verification.deep import session_keys
from verification.resolver import answers_withheld, domain_lookup

logger = logging.getLogger(__name__)
# Addresses keyed at once: their fast verdicts are held meanwhile (10,000 take about 13 MB).
KEYS_AT_ONCE = 10_000


def needs_grouping(job: Job) -> bool:
    """A live deep job larger than one batch is grouped before it runs."""
    return fair_share.is_slow(job) and job.total > settings.BULK_DEEP_BATCH_ROWS


def job_group(*, job_id: str) -> bool:
    """Order the job's rows by MX address and create its chunks; True if this run's order stands."""
    job = Job.objects.filter(pk=job_id, status=Job.Status.PENDING, grouping=Job.Grouping.DUE).first()
    if job is None:
        return False  # grouped already, deleted, or cancelled by staff meanwhile
    try:
        addresses = files.input_addresses(job.input_name, job.total)
    except OSError:
        logger.exception("job %s: input file unreadable", job_id)
        job_fail(job_id=job_id, reason="The uploaded file could not be read.")
        return False
    # The order only saves sessions: a domain the resolver cannot answer now has no MX address to
    # group by, and its rows are judged (or put back) when their chunk runs, as in any job.
    lookup, keys = domain_lookup(strict=True), []
    with answers_withheld():
        for start in range(0, len(addresses), KEYS_AT_ONCE):  # a slice's verdicts at a time, not the job's
            keys.extend(session_keys(addresses[start : start + KEYS_AT_ONCE], lookup=lookup))
    batches = batches_of(keys, settings.BULK_DEEP_BATCH_ROWS)
    size = min(settings.BULK_CHUNK_SIZE, settings.BULK_DEEP_CHUNK_SIZE)
    chunks = [(n, rows[start : start + size]) for n, rows in enumerate(batches) for start in range(0, len(rows), size)]
    folder = files.grouped_save(job_id, addresses, [rows for _, rows in chunks])
    with transaction.atomic():
        won = Job.objects.filter(pk=job_id, status=Job.Status.PENDING, grouping=Job.Grouping.DUE).update(
            grouping=Job.Grouping.DONE, grouped_name=folder
        )
        if won:
            Chunk.objects.bulk_create(
                Chunk(job_id=job_id, index=index, size=len(rows), batch=number)
                for index, (number, rows) in enumerate(chunks)
            )
            tasks = fair_share.work_for_new_job(len(chunks))
            transaction.on_commit(lambda: fair_share.work_enqueue(tasks))
    if not won:
        files.input_delete(folder)
        return False
    groups = len(set(keys) - {""})
    logger.info("job %s: %d rows over %d MX addresses, in %d batches", job_id, len(keys), groups, len(batches))
    return True


def batches_of(keys: Sequence[str], budget: int) -> list[list[int]]:
    """Positions dealt into batches of at most `budget` rows, each key's rows (an MX address's) in one
    batch: the largest groups first, each into the first batch with room for it whole (first fit
    decreasing), a group larger than a batch first cut into whole batches in input order. Rows that
    need no session (key "") fill the room left. Each batch's positions in input order."""
    groups: dict[str, list[int]] = {}
    for position, key in enumerate(keys):
        groups.setdefault(key, []).append(position)
    loose = groups.pop("", [])
    batches: list[list[int]] = []
    for group in sorted(groups.values(), key=len, reverse=True):
        while len(group) > budget:
            batches.append(group[:budget])
            group = group[budget:]
        home = next((batch for batch in batches if len(batch) + len(group) <= budget), None)
        if home is None:
            batches.append(home := [])
        home.extend(group)
    for batch in batches:
        room = budget - len(batch)
        batch.extend(loose[:room])
        loose = loose[room:]
    batches.extend(loose[start : start + budget] for start in range(0, len(loose), budget))
    return [sorted(batch) for batch in batches]


def groupings_requeue_stale() -> int:
    """Queue again the grouping of jobs whose task was lost (its worker died): due, and queued more
    than a lease ago. Returns how many."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS)
    stale = Job.objects.filter(status=Job.Status.PENDING, grouping=Job.Grouping.DUE, grouping_queued_at__lt=cutoff)
    requeued = 0
    for job_id, queued_at in stale.values_list("pk", "grouping_queued_at")[:100]:
        if Job.objects.filter(pk=job_id, grouping_queued_at=queued_at).update(grouping_queued_at=now):
            queue.job_grouping(job_id)
            requeued += 1
    return requeued
