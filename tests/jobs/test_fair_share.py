"""Fair share (docs/bulk.md, "Many customers at once"): workers take chunks across accounts in turn,
oldest job first within one."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.db import connection, connections, transaction
from django.utils import timezone
from django_q.models import OrmQ

from jobs import fair_share
from jobs.chunk_runs import chunk_claim
from jobs.models import Chunk, Job
from jobs.worker import chunk_run_next
from tests.conftest import Persona, make_persona
from tests.jobs.conftest import RunTasks, upload
from tests.support.db import committed_db
from tests.support.threads import run_at_once


@pytest.fixture(autouse=True)
def _two_rows_a_chunk(settings: Any) -> None:
    settings.BULK_CHUNK_SIZE = 2


def rows(count: int, tag: str) -> bytes:
    return "".join(f"user{i}@{tag}.good.com\n" for i in range(count)).encode()


def claim_order(times: int) -> list[str]:
    """Which job each next claim goes to (claims are left running, as busy workers' would be)."""
    order = []
    for _ in range(times):
        (chunk_id, *_) = fair_share.chunk_pick()
        chunk = chunk_claim(chunk_id=chunk_id)
        assert chunk is not None
        order.append(chunk.job_id)
    return order


def test_accounts_take_turns_and_an_account_runs_its_oldest_job_first(db: None) -> None:
    a, b, c = (make_persona(plan_code="starter", credits=100) for _ in range(3))
    a1 = upload(a, rows(6, "a1")).json()["id"]  # 3 chunks
    a2 = upload(a, rows(4, "a2")).json()["id"]  # 2 chunks, newer: after a1
    b1 = upload(b, rows(6, "b1")).json()["id"]  # 3 chunks
    c1 = upload(c, rows(2, "c1")).json()["id"]  # 1 chunk
    order = claim_order(9)
    assert order == [a1, b1, c1, a1, b1, a1, b1, a2, a2]
    assert fair_share.chunk_pick() == []


def test_a_new_customer_goes_next_whatever_the_backlog(db: None) -> None:
    big = [make_persona(plan_code="starter", credits=1000) for _ in range(5)]
    for persona in big:
        upload(persona, rows(200, f"big{persona.account.pk}"))  # 100 chunks each
    claim_order(7)  # the five accounts have all been served
    small = make_persona(plan_code="starter", credits=100)
    job_id = upload(small, rows(2, "small")).json()["id"]
    assert claim_order(1) == [job_id]


def test_a_lease_that_ran_out_is_taken_again_in_its_turn(owner: Persona, settings: Any) -> None:
    job_id = upload(owner, rows(2, "x")).json()["id"]
    assert claim_order(1) == [job_id]
    assert fair_share.chunk_pick() == []  # leased to a (dead) worker
    with time_machine.travel(timezone.now() + timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS + 1)):
        assert claim_order(1) == [job_id]
        assert Chunk.objects.get(job_id=job_id).attempts == 2


def test_a_new_job_queues_a_bounded_number_of_workers(
    owner: Persona, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.BULK_PARALLEL_CHUNKS = 3
    with django_capture_on_commit_callbacks(execute=True):
        upload(owner, rows(20, "w"))  # 10 chunks
    assert OrmQ.objects.count() == 3


def test_one_task_goes_on_from_chunk_to_chunk_within_its_budget(owner: Persona) -> None:
    job_id = upload(owner, rows(20, "w")).json()["id"]  # 10 chunks
    assert chunk_run_next(budget=60) == 10
    assert Job.objects.get(pk=job_id).status == "completed"
    assert not OrmQ.objects.exists()  # nothing left waiting: no successor


def test_a_task_whose_budget_is_spent_hands_over_to_a_successor(
    owner: Persona, settings: Any, run_tasks: RunTasks
) -> None:
    settings.BULK_PARALLEL_CHUNKS, settings.BULK_TASK_SECONDS = 1, 0  # one chunk a task, one chain
    with run_tasks():
        job_id = upload(owner, rows(20, "w")).json()["id"]
    assert Job.objects.get(pk=job_id).status == "completed"


def test_without_work_a_worker_task_does_nothing(db: None) -> None:
    assert chunk_run_next(budget=5) == 0
    assert not OrmQ.objects.exists()


def test_waiting_work_whose_tasks_were_all_lost_is_queued_again(
    owner: Persona, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from jobs import tasks

    settings.BULK_PARALLEL_CHUNKS = 2
    upload(owner, rows(6, "lost"))  # its tasks never reach the queue (as if popped by a killed worker)
    assert tasks.requeue_stale_chunks() == 0  # young: its tasks may still be on their way
    later = timezone.now() + timedelta(seconds=settings.BULK_CHUNK_LEASE_SECONDS + 1)
    with time_machine.travel(later):
        assert tasks.requeue_stale_chunks() == 2
    assert OrmQ.objects.count() == 2


@committed_db
def test_workers_picking_the_same_chunk_at_once_claim_it_once() -> None:
    # Every idle worker picks the fairest chunk, so several claim the same one at the same instant.
    # (On PostgreSQL an UPDATE whose conditions sat in a subquery re-checked none of them after
    # waiting for the row: each waiter claimed it again, and four claims failed the job.)
    persona = make_persona(plan_code="starter", credits=100)
    job_id = upload(persona, rows(2, "race")).json()["id"]
    (chunk_id,) = Chunk.objects.filter(job_id=job_id).values_list("pk", flat=True)
    claims = run_at_once(4, lambda: chunk_claim(chunk_id=chunk_id))
    assert sum(claim is not None for claim in claims) == 1
    assert Chunk.objects.get(pk=chunk_id).attempts == 1
    assert Job.objects.get(pk=job_id).status == Job.Status.PROCESSING


@committed_db
def test_workers_picking_the_same_chunk_of_one_job_each_take_one_of_its_chunks() -> None:
    # One job's backlog: every idle worker picks its first chunk, and the ones that lose the claim
    # take the job's next chunks instead of ending their task (so the job runs on every worker).
    persona = make_persona(plan_code="starter", credits=100)
    job_id = upload(persona, rows(10, "siblings")).json()["id"]  # 5 chunks
    first = Chunk.objects.get(job_id=job_id, index=0).pk
    claims = run_at_once(3, lambda: chunk_claim(chunk_id=first))
    assert sorted(claim.index for claim in claims if claim is not None) == [0, 1, 2]
    assert list(Chunk.objects.filter(job_id=job_id).order_by("index").values_list("attempts", flat=True)) == [
        1,
        1,
        1,
        0,
        0,
    ]


def test_a_worker_whose_pick_was_taken_leaves_the_job_while_another_account_waits(db: None) -> None:
    a, b = (make_persona(plan_code="starter", credits=100) for _ in range(2))
    a1 = upload(a, rows(6, "a1")).json()["id"]  # 3 chunks
    upload(b, rows(2, "b1"))
    first = Chunk.objects.get(job_id=a1, index=0).pk
    assert chunk_claim(chunk_id=first) is not None
    assert chunk_claim(chunk_id=first) is None  # b's turn: the worker goes on to its next pick
    assert Chunk.objects.filter(job_id=a1, attempts=0).count() == 2


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are PostgreSQL's")
@committed_db
def test_a_worker_does_not_wait_for_a_chunk_another_is_claiming() -> None:
    # The other worker's claim holds the chunk's row until it commits: this one takes the next chunk at once.
    persona = make_persona(plan_code="starter", credits=100)
    job_id = upload(persona, rows(6, "locked")).json()["id"]  # 3 chunks
    first = Chunk.objects.get(job_id=job_id, index=0).pk
    locked, release = threading.Event(), threading.Event()

    def other_worker() -> None:
        try:
            with transaction.atomic():
                Chunk.objects.select_for_update().get(pk=first)
                locked.set()
                release.wait(5)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other_worker)
    thread.start()
    try:
        assert locked.wait(5)
        started = time.monotonic()
        claim = chunk_claim(chunk_id=first)
        waited = time.monotonic() - started
    finally:
        release.set()
        thread.join()
    assert claim is not None and claim.index == 1
    assert waited < 2
