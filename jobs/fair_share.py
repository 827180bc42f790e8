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
from django.db.models import Exists, Min, OuterRef, Q
from django.utils import timezone

from accounts.models import KeyMode
from jobs import queue
from jobs.models import Chunk, Job
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


# A live deep job's chunks wait on mail servers (a test key's sandbox answers at once): in a query,
# and of a job in hand.
SLOW_CHUNKS = Q(job__validation_mode=ValidationMode.DEEP, job__key_mode=KeyMode.LIVE)
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


def _batch_held(now: datetime) -> Q:
    """A chunk whose batch another worker is running now (a chunk of it leased): a deep worker takes a
    batch whole, so the next one takes the job's next batch. A job not grouped is one batch."""
    running = Chunk.objects.filter(job_id=OuterRef("job_id"), state=Chunk.State.RUNNING, lease_expires_at__gte=now)
    ungrouped = Q(batch__isnull=True) & Exists(running.filter(batch__isnull=True))
    return Exists(running.filter(batch=OuterRef("batch"))) | ungrouped


def chunk_pick(limit: int = 3, *, deep: bool = True, sandbox_only: bool = False) -> list[int]:
    """Up to `limit` chunk ids in the order they should be taken: one per job, fairest first.
    `deep=False` leaves live deep jobs out (this worker holds no deep slot: deep_slot below); a live
    deep job's batches that other workers hold are left out in any case. `sandbox_only`: test keys'
    chunks alone (the resolver is broken)."""
    now = timezone.now()
    waiting = Chunk.objects.filter(claimable(now), job__status__in=UNFINISHED)
    waiting = waiting.exclude(SLOW_CHUNKS) if not deep else waiting.exclude(SLOW_CHUNKS & _batch_held(now))
    if sandbox_only:
        waiting = waiting.filter(SANDBOX_CHUNKS)
    first = dict(waiting.order_by().values("job_id").annotate(first=Min("index")).values_list("job_id", "first"))
    if not first:
        return []
    jobs = list(
        Job.objects.filter(status__in=UNFINISHED).order_by().values_list("pk", "account_id", "created_at", "served_at")
    )
    served = _last_served(jobs)
    turn = sorted((job for job in jobs if job[0] in first), key=lambda j: (served.get(j[1], NEVER), j[2], j[0]))
    wanted = Q()
    for job_id, *_ in turn[:limit]:
        wanted |= Q(job_id=job_id, index=first[job_id])
    order = {job_id: position for position, (job_id, *_) in enumerate(turn)}
    picked = Chunk.objects.filter(wanted).values_list("job_id", "pk")
    return [pk for _, pk in sorted(picked, key=lambda row: order[row[0]])]


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
