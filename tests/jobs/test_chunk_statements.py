"""A chunk's finishing statements and the two checks every chunk's worker makes, written out
(jobs/chunk_runs.py, jobs/lifecycle.py, jobs/grouping.py): they select and write what the ORM's
conditions and updates did."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import timedelta

import pytest
from django.conf import settings
from django.db.models import F
from django.utils import timezone

from accounts.models import KeyMode
from jobs import grouping, lifecycle
from jobs.chunk_runs import _breakdown, chunk_finish
from jobs.models import Chunk, Job
from lib import sql
from tests.support.personas import make_persona
from verification.engine import Status
from verification.engine.sandbox import SANDBOX_ADDRESSES, sandbox_verdicts

NOW = timezone.now()


@pytest.fixture
def account_id(db: None) -> int:
    return make_persona().account.pk


def test_the_groupings_waiting_are_the_orms(account_id: int) -> None:
    """Every combination of a job's status, grouping and grouping claim, its lease's edge included,
    in an order of creation the statement must keep."""
    lease = timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS)
    claims = [None, NOW, NOW - lease / 2, NOW - lease, NOW - lease - timedelta(seconds=1)]
    grid = itertools.product(range(4), list(Job.Status), list(Job.Grouping), claims)  # four of each
    jobs = [
        Job(
            id=f"job_{n}",
            account_id=account_id,
            status=status,
            grouping=due,
            grouping_claimed_at=claimed,
            created_at=NOW - timedelta(minutes=n * 7 % 11, seconds=n),
            total=1,
            input_name="x",
        )
        for n, (_, status, due, claimed) in enumerate(grid)
    ]
    Job.objects.bulk_create(jobs)
    # Taken at NOW's instant, as `job_group_next` computes its cutoff: the lease's edge is not claimable.
    expected = Job.objects.filter(grouping._claimable(NOW)).order_by("created_at").values_list("pk", flat=True)[:5]
    written = sql.fetch_all(grouping._WAITING_SQL, {"cutoff": sql.db_datetime(NOW - lease)})
    assert len(expected) == 5 and Job.objects.filter(grouping._claimable(NOW)).count() == 8
    assert [pk for (pk,) in written] == list(expected)


def test_a_job_is_done_when_the_orm_said_so(account_id: int) -> None:
    """Every job status, beside no chunk, chunks all done, or one of each other state among done ones."""
    others = [state for state in Chunk.State if state != Chunk.State.DONE]
    shapes: list[list[str]] = [[], [Chunk.State.DONE] * 2, *([Chunk.State.DONE, state] for state in others)]
    jobs, chunks = [], []
    for n, (status, shape) in enumerate(itertools.product(list(Job.Status), shapes)):
        job = Job(id=f"job_{n}", account_id=account_id, status=status, total=2, input_name="x")
        jobs.append(job)
        chunks += [Chunk(job=job, index=index, size=1, state=state) for index, state in enumerate(shape)]
    Job.objects.bulk_create(jobs)
    Chunk.objects.bulk_create(chunks)
    for job in jobs:
        expected = (
            not Chunk.objects.filter(job_id=job.pk).exclude(state=Chunk.State.DONE).exists()
            and Job.objects.filter(pk=job.pk, status=Job.Status.PROCESSING).exists()
        )
        assert bool(sql.fetch_one(lifecycle._DONE_SQL, {"id": job.pk})) is expected, (job.status, job.pk)
    assert sum(bool(sql.fetch_one(lifecycle._DONE_SQL, {"id": job.pk})) for job in jobs) == 2


def _running(account_id: int, *, attempts: int = 1) -> Chunk:
    job = Job.objects.create(
        account_id=account_id,
        status=Job.Status.PROCESSING,
        key_mode=KeyMode.TEST,  # no ledger: what is written is the chunk's and the job's
        total=40,
        input_name="x",
        processed=7,
        valid=3,
        unknown=4,
        breakdown={"mailbox_not_found": 2, "free_provider": 1, "provider:google": 5},
    )
    chunk = Chunk.objects.create(
        job=job, index=0, size=len(SANDBOX_ADDRESSES), state=Chunk.State.RUNNING, attempts=attempts, reserved=20
    )
    chunk.job = job
    return chunk


def test_a_finished_chunk_adds_its_tallies_and_breakdown_to_its_jobs(account_id: int) -> None:
    chunk = _running(account_id)
    verdicts = sandbox_verdicts([*SANDBOX_ADDRESSES, "someone@gmail.com", "x@hotmail.com"])
    assert chunk_finish(chunk=chunk, verdicts=verdicts, part_name="parts/0")
    statuses = Counter(verdict.status for verdict in verdicts)
    done = Chunk.objects.get(pk=chunk.pk)
    assert (done.state, done.lease_expires_at, done.part_name) == (Chunk.State.DONE, None, "parts/0")
    assert (done.processed, done.valid, done.invalid, done.risky, done.unknown) == (
        len(verdicts),
        statuses[Status.VALID],
        statuses[Status.INVALID],
        statuses[Status.RISKY],
        statuses[Status.UNKNOWN],
    )
    job = Job.objects.get(pk=chunk.job_id)
    assert (job.processed, job.valid, job.invalid, job.risky, job.unknown) == (
        7 + len(verdicts),
        3 + statuses[Status.VALID],
        statuses[Status.INVALID],
        statuses[Status.RISKY],
        4 + statuses[Status.UNKNOWN],
    )
    # What the ORM version wrote: the job's breakdown and the chunk's, added as Counters (zeros dropped).
    expected = dict(Counter({"mailbox_not_found": 2, "free_provider": 1, "provider:google": 5}) + _breakdown(verdicts))
    assert job.breakdown == expected
    assert expected["mailbox_not_found"] == 3 and expected["free_provider"] == 3 and "catch_all_likely" not in expected


def test_a_chunk_taken_over_finishes_nothing(account_id: int) -> None:
    chunk = _running(account_id)
    Chunk.objects.filter(pk=chunk.pk).update(attempts=F("attempts") + 1)  # another worker's lease now
    before = Job.objects.values("processed", "breakdown").get(pk=chunk.job_id)
    assert not chunk_finish(chunk=chunk, verdicts=sandbox_verdicts(list(SANDBOX_ADDRESSES)), part_name="parts/0")
    assert Job.objects.values("processed", "breakdown").get(pk=chunk.job_id) == before
    assert Chunk.objects.values_list("state", "part_name").get(pk=chunk.pk) == (Chunk.State.RUNNING, "")
