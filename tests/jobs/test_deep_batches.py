"""A large deep job's batches run side by side (docs/deep.md, "Bulk jobs"): a job larger than a
batch has its rows dealt by MX address into as many batches as a machine's deep workers run at once
(BULK_DEEP_WORKERS), each address in one batch, and a worker never takes a batch another holds. The
same on a real qcluster, two worker processes within one address's cap: tests/jobs/test_deep_e2e.py."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from jobs import fair_share, files, grouping, worker
from jobs.chunk_runs import chunk_claim
from jobs.grouping import job_group
from jobs.models import Chunk, Job
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks
from tests.support.bulk_jobs import deep_upload, job_body
from tests.support.deep import CATCH_ALL, MAILBOX, hosted_on, tenants
from tests.support.dns_server import DnsServer
from tests.support.mx_farm import MxFarm
from verification.deep import session_keys
from verification.engine.smtp_scheduling import sessions_needed


@pytest.mark.parametrize(
    ("workers", "total", "rows"),
    [
        (2, 20_000, 20_000),  # the benchmark's job: within one batch, so one batch, not ordered first
        (3, 2_000, 20_000),  # one chunk
        (2, 30_000, 16_000),  # larger, ordered anyway: half each, in whole chunks
        (3, 30_000, 10_000),  # a third each
        (2, 40_000, 20_000),  # the benchmark's larger job: two batches at once
        (2, 100_000, 20_000),  # never more than BULK_DEEP_BATCH_ROWS
        (1, 30_000, 20_000),  # one deep worker: whole batches
    ],
)
def test_a_larger_jobs_batch_is_its_share_of_a_machines_deep_workers(
    settings: Any, workers: int, total: int, rows: int
) -> None:
    settings.BULK_CHUNK_SIZE = settings.BULK_DEEP_CHUNK_SIZE = 2000
    settings.BULK_DEEP_BATCH_ROWS, settings.BULK_DEEP_WORKERS = 20_000, workers
    assert fair_share.batch_rows(total) == rows


def test_a_batch_limit_below_a_chunk_still_holds(settings: Any) -> None:
    settings.BULK_CHUNK_SIZE = settings.BULK_DEEP_CHUNK_SIZE = 2000
    settings.BULK_DEEP_BATCH_ROWS, settings.BULK_DEEP_WORKERS = 500, 2
    assert fair_share.batch_rows(20_000) == 500


def two_addresses_alternating(owner: Persona, settings: Any, dns: DnsServer) -> tuple[str, list[str]]:
    """40 rows, more than one BULK_DEEP_BATCH_ROWS (32), on two MX addresses that alternate in the
    upload; chunks of 8, two deep workers: batches of 24 rows, and the job ordered by MX address first."""
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_WORKERS, settings.BULK_DEEP_BATCH_ROWS = 8, 2, 32
    mailbox = tenants(dns, 20)
    catch_all = hosted_on(dns, CATCH_ALL, 20, "catchy")
    rows = [email for pair in zip(mailbox, catch_all, strict=True) for email in (f"alice@{pair[0]}", f"bob@{pair[1]}")]
    return str(deep_upload(owner, rows).json()["id"]), rows


def batch_rows_by_address(job_id: str) -> dict[int, set[str]]:
    """Each batch's rows' domains' kind (tenant: MAILBOX, catchy: CATCH_ALL)."""
    job = Job.objects.get(pk=job_id)
    kinds: dict[int, set[str]] = {}
    for chunk in Chunk.objects.filter(job_id=job_id):
        rows = files.input_rows(job.chunks_folder, chunk.index, chunk.size)
        kinds.setdefault(chunk.batch or 0, set()).update(re.sub(r"\d.*", "", row.split("@")[1]) for row in rows)
    return kinds


def test_a_deep_job_larger_than_a_batch_is_dealt_among_two_deep_workers_by_address(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer, run_tasks: RunTasks
) -> None:
    job_id, _ = two_addresses_alternating(owner, settings, _resolver_on_loopback)
    assert Job.objects.get(pk=job_id).grouping == Job.Grouping.DUE  # more rows than a batch: ordered first
    assert job_group(job_id=job_id)
    assert batch_rows_by_address(job_id) == {0: {"tenant"}, 1: {"catchy"}}  # each address whole in one batch
    with run_tasks():
        fair_share.work_enqueue(2)
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["valid"], body["progress"]["risky"]) == ("completed", 20, 20)
    for address in (MAILBOX, CATCH_ALL):  # each address's 20 rows and 20 probes in the 3 sessions they need
        assert deep_farm.stats.sessions[address] == sessions_needed(20 + 20, 3) == 3, address
        assert deep_farm.stats.peak[address] <= 3


def claimed_by_a_worker(*, mates: bool = True) -> list[int]:
    """What a deep worker takes (jobs/worker.py): the chunk picked, then its batch mates; indexes."""
    first = chunk_claim(chunk_id=fair_share.chunk_pick()[0])
    assert first is not None
    taken = [first, *(chunk_claim(chunk_id=pk) for pk in fair_share.deep_batch(first))] if mates else [first]
    return sorted(chunk.index for chunk in taken if chunk is not None)


def test_two_deep_workers_hold_a_jobs_two_batches_at_once(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    job_id, _ = two_addresses_alternating(owner, settings, _resolver_on_loopback)
    assert job_group(job_id=job_id)
    batches = dict(Chunk.objects.filter(job_id=job_id).values_list("index", "batch"))
    assert sorted(batches.items()) == [(0, 0), (1, 0), (2, 0), (3, 1), (4, 1), (5, 1)]
    assert claimed_by_a_worker() == [0, 1, 2]
    assert claimed_by_a_worker() == [3, 4, 5]  # the second worker, while the first holds its batch
    assert fair_share.chunk_pick() == []


def test_a_worker_never_takes_a_batch_whose_first_chunk_another_has_just_claimed(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    """Between a worker's claim of a batch's first chunk and its claims of the others, a second worker
    picks the job's next batch, not the first one's remaining chunks: an address stays in one process."""
    job_id, _ = two_addresses_alternating(owner, settings, _resolver_on_loopback)
    assert job_group(job_id=job_id)
    assert claimed_by_a_worker(mates=False) == [0]
    assert claimed_by_a_worker() == [3, 4, 5]
    assert fair_share.chunk_pick() == []  # chunks 1 and 2 are the first worker's to take


def test_a_deep_worker_that_loses_its_pick_to_a_quicker_one_takes_the_jobs_next_batch(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer, monkeypatch: Any
) -> None:
    """Two workers woken together pick the same first chunk; the one that loses the claim picks again
    and takes the next batch, rather than ending its task and leaving the job to the winner alone."""
    job_id, _ = two_addresses_alternating(owner, settings, _resolver_on_loopback)
    assert job_group(job_id=job_id)
    stale = fair_share.chunk_pick()  # both workers picked this before either claimed it
    assert claimed_by_a_worker() == [0, 1, 2]  # the quicker one
    picks = iter([stale])
    real_pick = fair_share.chunk_pick
    monkeypatch.setattr(fair_share, "chunk_pick", lambda **kw: next(picks, None) or real_pick(**kw))
    taken = worker._claim_next(deep=True)
    assert taken is not None and taken.index == 3 and taken.batch == 1


def test_a_batch_whose_worker_died_is_taken_whole_after_its_lease(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    job_id, _ = two_addresses_alternating(owner, settings, _resolver_on_loopback)
    assert job_group(job_id=job_id)
    assert claimed_by_a_worker() == [0, 1, 2]
    assert claimed_by_a_worker() == [3, 4, 5]
    lapsed = Chunk.objects.get(job_id=job_id, index=0).lease_expires_at - timedelta(
        seconds=settings.BULK_CHUNK_LEASE_SECONDS + 1
    )
    Chunk.objects.filter(job_id=job_id, batch=0).update(lease_expires_at=lapsed)  # its worker was killed
    assert claimed_by_a_worker() == [0, 1, 2]  # another takes it whole, its second attempt
    assert set(Chunk.objects.filter(job_id=job_id, batch=0).values_list("attempts", flat=True)) == {2}


@pytest.mark.django_db
def test_rows_are_keyed_by_their_domains_mx_address_once_a_domain(
    deep_farm: MxFarm, _resolver_on_loopback: DnsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ordering asks the fast rules and DNS once a domain (a stand-in address on it), not once a
    row; a row whose own syntax is wrong takes its domain's key, a row with no domain none."""
    (tenant,) = tenants(_resolver_on_loopback, 1)
    (catchy,) = hosted_on(_resolver_on_loopback, CATCH_ALL, 1, "catchy")
    asked: list[list[str]] = []

    def counted(emails: list[str], **kwargs: Any) -> list[str]:
        asked.append(list(emails))
        return session_keys(emails, **kwargs)

    monkeypatch.setattr(grouping, "session_keys", counted)
    rows = [f"alice@{tenant}", f"Bob@{tenant.upper()}", f"no body@{tenant}", "nobody", f"carol@{catchy}"]
    assert grouping._keys(rows) == [MAILBOX, MAILBOX, MAILBOX, "", CATCH_ALL]
    assert asked == [[f"{grouping.STAND_IN}@{tenant}", f"{grouping.STAND_IN}@{catchy}"]]
