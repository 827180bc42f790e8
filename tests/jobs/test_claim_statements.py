"""The pick's and the claim's hand-written statements (jobs/fair_share.py, jobs/chunk_runs.py) select
what the ORM's conditions say, over every combination of a chunk's and its job's states."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

import pytest
from django.db.models import Exists, Min, OuterRef, Q, QuerySet
from django.utils import timezone

from accounts.models import KeyMode
from jobs import fair_share
from jobs.chunk_runs import _take
from jobs.models import Chunk, Job
from lib import sql
from tests.support.personas import make_persona
from verification.engine.modes import ValidationMode

NOW = timezone.now()
PAST, FUTURE = NOW - timedelta(minutes=1), NOW + timedelta(minutes=1)
STATES = list(Chunk.State)
WHENS = [None, PAST, NOW, FUTURE]
BATCHES = [None, 1, 2]
# A job's other chunk, index 0 (the chunk under test is index 1): none, or one in a state, batch and lease.
MATES: list[tuple[str, int | None, datetime] | None] = [
    None,
    (Chunk.State.RUNNING, None, FUTURE),
    (Chunk.State.RUNNING, 1, FUTURE),
    (Chunk.State.RUNNING, 2, NOW),
    (Chunk.State.RUNNING, 1, PAST),
    (Chunk.State.DONE, 1, FUTURE),
]

# What the statements must select, in the ORM's terms.
SLOW = Q(job__validation_mode=ValidationMode.DEEP, job__key_mode=KeyMode.LIVE)


def batch_held(now: datetime) -> Q:
    running = Chunk.objects.filter(job_id=OuterRef("job_id"), state=Chunk.State.RUNNING, lease_expires_at__gte=now)
    ungrouped = Q(batch__isnull=True) & Exists(running.filter(batch__isnull=True))
    return Exists(running.filter(batch=OuterRef("batch"))) | ungrouped


def waiting(now: datetime) -> QuerySet[Chunk]:
    return Chunk.objects.filter(fair_share.claimable(now), job__status__in=fair_share.UNFINISHED)


@pytest.fixture
def world(db: None) -> None:
    """Two grids of jobs of one chunk each (index 1), beside another chunk of theirs (index 0) or not.
    When a chunk may be taken: its job's status, its state, `not_before` and lease, every combination.
    Which jobs a pick leaves out: the job's mode and key mode, the chunk's batch and the other chunk's
    state and batch, each with a chunk waiting, running or done, in a job running or finished."""
    account = make_persona().account
    taking = itertools.product(
        list(Job.Status), [ValidationMode.FAST], [KeyMode.LIVE], STATES, WHENS, WHENS, [None], [None]
    )
    pending, expired, done = (
        (Chunk.State.PENDING, None, None),
        (Chunk.State.RUNNING, None, PAST),
        (Chunk.State.DONE, None, None),
    )
    leaving_out = (
        (status, mode, key_mode, *chunk, batch, mate)
        for status, mode, key_mode, chunk, batch, mate in itertools.product(
            [Job.Status.PROCESSING, Job.Status.COMPLETED],
            ValidationMode,
            KeyMode,
            [pending, expired, done],
            BATCHES,
            MATES,
        )
    )
    jobs, chunks = [], []
    for n, (status, mode, key_mode, state, not_before, lease, batch, mate) in enumerate(
        itertools.chain(taking, leaving_out)
    ):
        job = Job(
            id=f"job_{n}",
            account=account,
            status=status,
            validation_mode=mode,
            key_mode=key_mode,
            total=2,
            input_name="x",
        )
        jobs.append(job)
        chunks.append(
            Chunk(job=job, index=1, size=1, state=state, not_before=not_before, lease_expires_at=lease, batch=batch)
        )
        if mate is not None:
            chunks.append(Chunk(job=job, index=0, size=1, state=mate[0], lease_expires_at=mate[2], batch=mate[1]))
    Job.objects.bulk_create(jobs)
    Chunk.objects.bulk_create(chunks)


@pytest.mark.parametrize("deep", [True, False])
@pytest.mark.parametrize("sandbox_only", [True, False])
def test_the_pick_selects_what_the_orm_would(world: None, deep: bool, sandbox_only: bool) -> None:
    expected = waiting(NOW).exclude(SLOW & batch_held(NOW)) if deep else waiting(NOW).exclude(SLOW)
    if sandbox_only:
        expected = expected.filter(fair_share.SANDBOX_CHUNKS)
    by_job = expected.order_by().values("job_id").annotate(first=Min("index")).values_list("job_id", "first")
    assert len(by_job) > 20  # the world holds plenty of each answer
    assert fair_share.first_waiting(NOW, deep=deep, sandbox_only=sandbox_only) == dict(by_job)


def test_the_claimable_chunks_are_the_orms(world: None) -> None:
    written = sql.fetch_all(
        f"SELECT c.id FROM {fair_share.CHUNKS_OF_UNFINISHED} WHERE {fair_share.CLAIMABLE_SQL}",
        {"now": sql.db_datetime(NOW)},
    )
    expected = set(waiting(NOW).values_list("pk", flat=True))
    assert expected and Chunk.objects.count() > len(expected)
    assert {pk for (pk,) in written} == expected


def test_a_claim_takes_exactly_the_claimable_chunks(world: None) -> None:
    expected = set(waiting(NOW).values_list("pk", flat=True))
    before = {chunk.pk: chunk.attempts for chunk in Chunk.objects.all()}
    taken = {pk for pk in before if _take(pk, NOW)}
    assert taken == expected
    for chunk in Chunk.objects.filter(pk__in=taken):
        assert (chunk.state, chunk.attempts) == (Chunk.State.RUNNING, before[chunk.pk] + 1)
        assert chunk.lease_expires_at is not None and chunk.lease_expires_at > NOW
    assert not any(_take(pk, NOW) for pk in taken)  # leased now: taken once
