"""A deep job's sessions per MX address are what its recipients need (docs/deep.md, "Bulk jobs"):
its rows are grouped by MX address across the job (a deep worker takes a batch of its chunks),
MX host names that differ but lead to one address included, so a job of 40 tenants on one address
opens 3 sessions, not 40, however many chunks hold them."""

from __future__ import annotations

from typing import Any

from jobs import fair_share
from jobs.chunks import chunk_claim
from jobs.models import Chunk
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks
from tests.jobs.test_deep_jobs import deep_upload
from tests.jobs.test_processing import download, job_body
from tests.support.dns_server import DnsServer
from tests.support.mx_farm import MxFarm
from tests.verification.test_smtp_grouping import MAILBOX, tenants
from verification.engine.smtp_scheduling import sessions_needed


def test_a_deep_jobs_sessions_per_mx_address_are_what_its_recipients_need(
    owner: Persona, deep_farm: MxFarm, _resolver_on_loopback: DnsServer, run_tasks: RunTasks
) -> None:
    domains = tenants(_resolver_on_loopback, 20)  # a host name per tenant, every one on the same address
    rows = [f"{local}@{domain}" for domain in domains for local in ("alice", "bob")]
    with run_tasks():
        job_id = deep_upload(owner, rows).json()["id"]
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["valid"], body["progress"]["invalid"]) == ("completed", 20, 20)
    recipients = len(rows) + len(domains)  # and a catch-all probe a domain
    assert deep_farm.stats.sessions[MAILBOX] == sessions_needed(recipients, 3) == 3
    assert deep_farm.stats.peak[MAILBOX] <= 3


def test_an_mx_addresss_rows_in_many_chunks_share_its_sessions_and_keep_their_order(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer, run_tasks: RunTasks
) -> None:
    settings.BULK_DEEP_CHUNK_SIZE = 8  # 40 rows: five chunks, every row on one MX address
    domains = tenants(_resolver_on_loopback, 20)
    rows = [f"{local}@{domain}" for local in ("alice", "bob") for domain in domains]
    with run_tasks():
        job_id = deep_upload(owner, rows).json()["id"]
    assert Chunk.objects.filter(job_id=job_id).count() == 5
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["valid"], body["progress"]["invalid"]) == ("completed", 20, 20)
    # the whole job is one batch: its 40 recipients and 20 probes share 3 sessions, not 3 a chunk
    assert deep_farm.stats.sessions[MAILBOX] == sessions_needed(len(rows) + len(domains), 3) == 3
    assert deep_farm.stats.peak[MAILBOX] <= 3
    result = download(owner, body["result_download_url"])
    assert [row[0] for row in result[1:]] == rows  # input order, whatever order the sessions asked in
    status = result[0].index("status")
    assert [row[status] for row in result[1:]] == ["valid"] * 20 + ["invalid"] * 20


def test_a_deep_batch_stops_at_its_row_budget(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer, run_tasks: RunTasks
) -> None:
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_BATCH_ROWS = 8, 16  # batches of two chunks: 16, 16, 8 rows
    domains = tenants(_resolver_on_loopback, 20)
    rows = [f"{local}@{domain}" for local in ("alice", "bob") for domain in domains]
    with run_tasks():
        job_id = deep_upload(owner, rows).json()["id"]
    assert job_body(owner, job_id)["status"] == "completed"
    # each batch its own sessions (a probe a domain not yet in the shared catch-all cache):
    # alice@tenant0-15 and 16 probes; alice@tenant16-19, bob@tenant0-11 and 4 probes; bob@tenant12-19
    needed = [sessions_needed(16 + 16, 3), sessions_needed(16 + 4, 3), sessions_needed(8, 3)]
    assert needed == [3, 2, 1] and deep_farm.stats.sessions[MAILBOX] == sum(needed)


def test_a_second_deep_worker_takes_the_jobs_next_batch(
    owner: Persona, settings: Any, deep_farm: MxFarm, _resolver_on_loopback: DnsServer
) -> None:
    """A job larger than a batch is carried by more than one deep worker at once, a batch each."""
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_BATCH_ROWS = 8, 16
    domains = tenants(_resolver_on_loopback, 20)
    deep_upload(owner, [f"{local}@{domain}" for local in ("alice", "bob") for domain in domains])  # 5 chunks

    def batch_taken() -> list[int]:
        first = chunk_claim(chunk_id=fair_share.chunk_pick()[0])
        assert first is not None
        mates = [chunk_claim(chunk_id=pk) for pk in fair_share.deep_batch(first)]
        return [chunk.index for chunk in (first, *mates) if chunk is not None]

    assert batch_taken() == [0, 1]
    assert batch_taken() == [2, 3]  # while the first is still running
    assert batch_taken() == [4]
    assert fair_share.chunk_pick() == []
