"""Fair share (docs/bulk.md, "Many customers at once"): which chunk a worker takes next, with the
database as the scheduler.

The django-q2 queue holds no chunk ids, only "run the next chunk" tasks. Whichever worker
takes one asks the database whose turn it is: the account served least recently (one never
served first), and within it the oldest job, and within that the first chunk not done. A
new customer's chunk therefore waits for the chunks being worked on now, never for other
customers' backlogs, whatever sits ahead of it in the queue.

How many such tasks exist is bounded: a new job queues one per chunk up to
BULK_PARALLEL_CHUNKS, and a task that ran a chunk queues one successor while any chunk is
waiting. The claim itself (lease, attempt count, reservation) is `chunk_runs.chunk_claim`,
unchanged: who runs a chunk is decided by its conditional UPDATE, so two workers picking the
same chunk cost one a second pick, never a second run.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from accounts.models import KeyMode
from jobs import queue
from jobs.models import Chunk, Job
from lib import sql
from verification.engine.modes import ValidationMode

logger = logging.getLogger(__name__)

UNFINISHED = (Job.Status.PENDING, Job.Status.PROCESSING)
NEVER = datetime.min.replace(tzinfo=UTC)


def work_enqueue(count: int) -> None:
    """Queue `count` tasks that each run whichever chunk's turn it is."""
    queue.chunk_work(count)


def work_for_new_job(chunks: int) -> int:
    return min(chunks, settings.BULK_PARALLEL_CHUNKS)


def claimable(now: datetime) -> Q:
    """Chunks a worker may take: never claimed (or put back to ask greylisted rows again, once their
    time has come), or their worker's lease ran out (it died)."""
    due = Q(not_before__isnull=True) | Q(not_before__lte=now)
    return Q(due, state=Chunk.State.PENDING) | Q(state=Chunk.State.RUNNING, lease_expires_at__lt=now)


# A test key's chunks: the sandbox judges them, asking no resolver, so they run while it is broken.
SANDBOX_CHUNKS = Q(job__key_mode=KeyMode.TEST)


def is_slow(job: Job) -> bool:
    return job.validation_mode == ValidationMode.DEEP and job.key_mode == KeyMode.LIVE


def batch_rows(total: int) -> int:
    """The rows of one batch of a live deep job of `total` rows (docs/deep.md, "Bulk jobs"). A job
    within BULK_DEEP_BATCH_ROWS is one batch: halving it would mean ordering it by MX address
    first, which costs about what the half batches save. A larger job, ordered anyway, is shared
    among the deep workers one machine runs at once (BULK_DEEP_WORKERS), so that its batches run
    side by side, in whole chunks, and never more than BULK_DEEP_BATCH_ROWS."""
    if total <= settings.BULK_DEEP_BATCH_ROWS:
        return settings.BULK_DEEP_BATCH_ROWS
    chunk = min(settings.BULK_CHUNK_SIZE, settings.BULK_DEEP_CHUNK_SIZE)
    share = -(-total // settings.BULK_DEEP_WORKERS)
    return min(settings.BULK_DEEP_BATCH_ROWS, max(chunk, -(-share // chunk) * chunk))


# The statements of every pick and claim, written out (lib/sql.py): compiled afresh by the ORM for
# each chunk, they took about a tenth of a fast chunk's worker CPU, many times what the database
# needed to run them. Chunk `c` of job `j`; `%(now)s` the claim's time. CLAIMABLE_SQL says what
# `claimable` says; tests/jobs/test_claim_statements.py holds them, and the pick's conditions, to
# what the ORM would select.
CHUNKS, JOBS = Chunk._meta.db_table, Job._meta.db_table
UNFINISHED_SQL = f"j.status IN ('{Job.Status.PENDING}', '{Job.Status.PROCESSING}')"
CHUNKS_OF_UNFINISHED = f"{CHUNKS} c INNER JOIN {JOBS} j ON j.id = c.job_id AND {UNFINISHED_SQL}"
# A live deep job (its chunks wait on mail servers; a test key's sandbox answers at once).
SLOW_SQL = f"j.validation_mode = '{ValidationMode.DEEP}' AND j.key_mode = '{KeyMode.LIVE}'"
CLAIMABLE_SQL = (
    f"(((c.not_before IS NULL OR c.not_before <= %(now)s) AND c.state = '{Chunk.State.PENDING}')"
    f" OR (c.state = '{Chunk.State.RUNNING}' AND c.lease_expires_at < %(now)s))"
)
# The claim's own conditions (chunk_runs._take): on the chunk's row itself, its job's in a subquery.
TAKEABLE_SQL = f"{CLAIMABLE_SQL} AND c.job_id IN (SELECT j.id FROM {JOBS} j WHERE {UNFINISHED_SQL})"
# A test key's job (SANDBOX_CHUNKS's condition).
_SANDBOX_SQL = f"j.key_mode = '{KeyMode.TEST}'"
_RUNNING_MATE = (
    f"SELECT 1 FROM {CHUNKS} r WHERE r.job_id = c.job_id AND r.state = '{Chunk.State.RUNNING}'"
    " AND r.lease_expires_at >= %(now)s"
)
# A chunk whose batch another worker is running now (a chunk of it leased): a deep worker takes a
# batch whole, so the next one takes the job's next batch. A job not grouped is one batch.
_BATCH_HELD = (
    f"EXISTS ({_RUNNING_MATE} AND r.batch = c.batch)"
    f" OR (c.batch IS NULL AND EXISTS ({_RUNNING_MATE} AND r.batch IS NULL))"
)


def chunk_pick(limit: int = 3, *, deep: bool = True, sandbox_only: bool = False) -> list[int]:
    """Up to `limit` chunk ids in the order they should be taken: one per job, fairest first.
    `deep=False` leaves live deep jobs out (this worker holds no deep slot: deep_slot below); a live
    deep job's batches that other workers hold are left out in any case. `sandbox_only`: test keys'
    chunks alone (the resolver is broken)."""
    first = first_waiting(timezone.now(), deep=deep, sandbox_only=sandbox_only)
    if not first:
        return []
    jobs = [
        (job_id, account_id, sql.aware(created_at), None if served_at is None else sql.aware(served_at))
        for job_id, account_id, created_at, served_at in sql.fetch_all(
            f"SELECT j.id, j.account_id, j.created_at, j.served_at FROM {JOBS} j WHERE {UNFINISHED_SQL}", []
        )
    ]
    served = _last_served(jobs)
    turn = sorted((job for job in jobs if job[0] in first), key=lambda j: (served.get(j[1], NEVER), j[2], j[0]))
    wanted = turn[:limit]
    order = {job_id: position for position, (job_id, *_) in enumerate(turn)}
    picked = sql.fetch_all(
        f"SELECT job_id, id FROM {CHUNKS} WHERE " + " OR ".join(['(job_id = %s AND "index" = %s)'] * len(wanted)),
        [value for job_id, *_ in wanted for value in (job_id, first[job_id])],
    )
    return [pk for _, pk in sorted(picked, key=lambda row: order[row[0]])]


def first_waiting(now: datetime, *, deep: bool, sandbox_only: bool) -> dict[str, int]:
    """Per job with a chunk a worker may take now, that chunk's index (`chunk_pick`'s flags)."""
    left_out = f"NOT ({SLOW_SQL} AND ({_BATCH_HELD}))" if deep else f"NOT ({SLOW_SQL})"
    sandbox = f" AND {_SANDBOX_SQL}" if sandbox_only else ""
    rows = sql.fetch_all(
        f'SELECT c.job_id, MIN(c."index") FROM {CHUNKS_OF_UNFINISHED}'
        f" WHERE {CLAIMABLE_SQL} AND {left_out}{sandbox} GROUP BY c.job_id",
        {"now": sql.db_datetime(now)},
    )
    return dict(rows)


def deep_batch(chunk: Chunk) -> list[int]:
    """The chunks to take with a live deep job's chunk just claimed: the job's next claimable ones,
    in order, while the batch stays within BULK_DEEP_BATCH_ROWS rows. Verified together, their rows
    are grouped by MX address across the batch (docs/deep.md, Bulk jobs): an address's recipients
    share the sessions politeness allows, whichever chunks hold them. A grouped job's batches were
    dealt by MX address before it ran (jobs/grouping.py): the chunk's batch mates are its batch's."""
    room = settings.BULK_DEEP_BATCH_ROWS - chunk.size
    mates = Chunk.objects.filter(claimable(timezone.now()), job_id=chunk.job_id).exclude(pk=chunk.pk)
    if chunk.batch is not None:
        mates = mates.filter(batch=chunk.batch)
    picked: list[int] = []
    for pk, size in mates.order_by("index").values_list("pk", "size"):
        if size > room:
            break
        picked.append(pk)
        room -= size
    return picked


def _last_served(jobs: list[tuple[str, int, datetime, datetime | None]]) -> dict[int, datetime]:
    """Per account, when any of its unfinished jobs last had a chunk claimed (from the rows already read)."""
    served: dict[int, datetime] = {}
    for _, account_id, _, served_at in jobs:
        if served_at is not None and served_at > served.get(account_id, NEVER):
            served[account_id] = served_at
    return served


def work_waiting() -> bool:
    return Chunk.objects.filter(claimable(timezone.now()), job__status__in=UNFINISHED).exists()


def work_stalled(now: datetime) -> bool:
    """Chunks wait, yet no chunk has been claimed for a lease's length: every task that would run them is lost.

    (A task popped from Redis by a worker that was then killed is gone; the ORM broker would
    hand it out again only after Q_RETRY.)
    """
    cutoff = now - timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS)
    if Job.objects.filter(status__in=UNFINISHED, served_at__gte=cutoff).exists():
        return False
    old = Chunk.objects.filter(
        claimable(now), state=Chunk.State.PENDING, job__status__in=UNFINISHED, job__created_at__lt=cutoff
    )
    return old.exists()
