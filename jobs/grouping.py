"""A large deep job's rows, ordered by MX address before it runs (docs/deep.md, "Bulk jobs").

A deep worker verifies a batch of a job's chunks together, and each MX address gets the sessions its
recipients in the batch need. A job within BULK_DEEP_BATCH_ROWS rows is one batch; a larger one's
batch is its share of a machine's deep workers (`fair_share.batch_rows`, at most
BULK_DEEP_BATCH_ROWS rows), so that its batches run side by side. Cut in upload order, a job larger
than a batch would have an address's recipients in every batch, each opening sessions of its own. So
such a job (live, deep, more rows than a batch) gets no chunks at upload: a deep worker first
resolves all its domains and their MX hosts' addresses, deals each address's rows whole into
batches, and only then creates the chunks, each recording its batch. The chunks' files say where
each row came from, and the result files put the rows back in input order (jobs/files.py).

A worker holding a deep slot does the grouping (`job_group_next`), before it takes a chunk: the
worker kept for fast jobs never does. It claims the grouping first; a claim over a lease old is
taken again (its worker died). Should two runs overlap, each writes a folder of its own, and the
one that records its folder on the job, while the job still waits for it, creates the chunks;
the other deletes its folder.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from jobs import fair_share, files
from jobs.lifecycle import job_fail
from jobs.models import Chunk, Job
from lib import sql
from verification.deep import session_keys
from verification.resolver import answers_withheld, domain_lookup

logger = logging.getLogger(__name__)
# Addresses keyed at once: their fast verdicts are held meanwhile (10,000 take about 13 MB).
KEYS_AT_ONCE = 10_000
# The local part of the address that stands for its domain's rows when they are keyed (_keys).
STAND_IN = "a"


def needs_grouping(job: Job) -> bool:
    """A live deep job larger than one batch is grouped before it runs."""
    return fair_share.is_slow(job) and job.total > fair_share.batch_rows(job.total)


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
    try:
        keys = _keys(addresses)
    except Exception:  # the order only saves sessions: it is never why a job does not run
        logger.exception("job %s: not ordered by MX address; its batches keep the upload's order", job_id)
        keys = [""] * len(addresses)
    batches = batches_of(keys, fair_share.batch_rows(len(keys)))
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


def _keys(addresses: Sequence[str]) -> list[str]:
    """Each address's MX-address key (verification.deep.session_keys), asked once a domain: the key
    is its domain's (where the domain's MX hosts lead), so the fast rules run on one stand-in
    address a domain, not on every row, a slice of them at a time. A row whose own syntax is wrong
    (it needs no session) takes its domain's key, and so its address's batch, rather than filling
    room. A domain the resolver cannot answer now has no MX address to group by: its rows are
    judged (or put back) when their chunk runs, as in any job."""
    domains = [address.rpartition("@")[2].strip().lower() if "@" in address else "" for address in addresses]
    stand_ins = [f"{STAND_IN}@{domain}" for domain in dict.fromkeys(domains) if domain]
    lookup, keys = domain_lookup(strict=True), {"": ""}
    with answers_withheld():
        for start in range(0, len(stand_ins), KEYS_AT_ONCE):
            part = stand_ins[start : start + KEYS_AT_ONCE]
            keys.update(zip((a.partition("@")[2] for a in part), session_keys(part, lookup=lookup), strict=True))
    return [keys[domain] for domain in domains]


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


def _claimable(now: datetime) -> Q:
    """Due groupings no worker is running: never taken, or taken over a lease ago (that worker died)."""
    lease = timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS)
    taken_long_ago = Q(grouping_claimed_at__isnull=True) | Q(grouping_claimed_at__lt=now - lease)
    return Q(taken_long_ago, status=Job.Status.PENDING, grouping=Job.Grouping.DUE)


_WAITING_SQL = (
    f"SELECT id FROM {fair_share.JOBS} WHERE status = '{Job.Status.PENDING}' AND \"grouping\" = '{Job.Grouping.DUE}'"
    " AND (grouping_claimed_at IS NULL OR grouping_claimed_at < %(cutoff)s) ORDER BY created_at LIMIT 5"
)


def job_group_next() -> bool:
    """Group the oldest job waiting for it, if any; a worker holding a deep slot asks before it takes
    a chunk (jobs/worker.py), so grouping never takes the worker kept for fast jobs. False if none."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS)
    # Asked before every chunk a deep slot's holder takes: written out (lib/sql.py), `_claimable`'s
    # conditions (tests/jobs/test_chunk_statements.py holds the two to the same jobs).
    waiting = sql.fetch_all(_WAITING_SQL, {"cutoff": sql.db_datetime(cutoff)})
    for (job_id,) in waiting:
        if Job.objects.filter(_claimable(now), pk=job_id).update(grouping_claimed_at=now):  # this worker's
            job_group(job_id=job_id)
            return True
    return False


def grouping_waiting() -> bool:
    return Job.objects.filter(_claimable(timezone.now())).exists()


def grouping_stalled(now: datetime) -> bool:
    """A job has waited over a lease for its grouping, which no worker runs: the task that would
    have run it was lost (fair_share.work_stalled says the same of chunks)."""
    cutoff = now - timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS)
    return Job.objects.filter(_claimable(now), created_at__lt=cutoff).exists()
