"""End to end, deep: runserver and a real qcluster against the MX farm, driven over HTTP, with the
worker killed (SIGKILL) mid-job."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.jobs.conftest import Receiver
from tests.jobs.test_e2e import Stack, live_stack, result_rows
from tests.support.deep import farm_zone
from tests.support.dns_server import DnsServer
from tests.support.mx_farm import MxFarm

pytestmark = pytest.mark.e2e

SLOW = "127.0.0.13"  # alice exists; every reply 50 ms late


@pytest.fixture(scope="module")
def deep_stack(
    tmp_path_factory: pytest.TempPathFactory, dns_server: DnsServer, migrated_sqlite: Path, farm: MxFarm
) -> Iterator[Stack]:
    slots = tmp_path_factory.mktemp("smtp-slots")
    with live_stack(
        tmp_path_factory.mktemp("e2e-deep"),
        dns_server,
        migrated_sqlite,
        VERIFIER_DEEP_MODE="1",
        VERIFIER_SMTP_PORT=str(farm.port),
        VERIFIER_SMTP_TIMEOUT="10",  # a loaded machine must not turn a slow answer into `unknown`
        VERIFIER_SMTP_ALLOW_PRIVATE_NETWORKS="1",
        VERIFIER_SMTP_LOCK_DIR=str(slots),
        VERIFIER_SMTP_GREYLIST_RETRY_SECONDS="1",
        BULK_CHUNK_LEASE_SECONDS="20",  # a chunk's sessions get half of it
    ) as stack:
        yield stack


def rows_on(dns: DnsServer, domains: int, per_domain: int) -> list[str]:
    tag = uuid.uuid4().hex[:6]
    names = [f"d{i}-{tag}.deepfarm.net" for i in range(domains)]
    farm_zone(dns, dict.fromkeys(names, [SLOW]))
    locals_ = ["alice", *(f"nobody{j}" for j in range(per_domain - 1))]
    return [f"{local}@{name}" for name in names for local in locals_]


def test_deep_job_over_http_with_a_real_worker(
    deep_stack: Stack, deep_farm: MxFarm, receiver: Receiver, dns_server: DnsServer
) -> None:
    emails = [*rows_on(dns_server, 4, 3), "alice@greylist.deepfarm.net", "alice@listed.deepfarm.net"]
    job = deep_stack.upload("\n".join(emails).encode(), receiver.url, validation_mode="deep")
    body = deep_stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=180)
    assert body["validation_mode"] == "deep"
    assert body["progress"] == {"total": 14, "processed": 14, "valid": 5, "invalid": 8, "risky": 0, "unknown": 1}
    assert body["breakdown"]["greylisted"] == 0 and body["breakdown"]["smtp_blocked"] == 1
    rows = result_rows(deep_stack, body["result_download_url"])
    assert [r[0] for r in rows[1:]] == emails
    assert deep_farm.stats.peak[SLOW] <= 3


def test_killed_deep_worker_loses_nothing_and_charges_each_row_once(
    deep_stack: Stack, deep_farm: MxFarm, receiver: Receiver, dns_server: DnsServer
) -> None:
    emails = rows_on(dns_server, 40, 5)
    job = deep_stack.upload("\n".join(emails).encode(), receiver.url, validation_mode="deep")
    deep_stack.wait_for(job["id"], lambda b: b["progress"]["processed"] > 0, timeout=60)
    deep_stack.kill_worker()
    assert deep_stack.job(job["id"])["status"] == "processing"
    deep_stack.start_worker()
    # A dead worker's chunk waits out its lease and the every-minute re-queue: minutes on a loaded machine.
    body = deep_stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=300)
    assert body["progress"]["processed"] == 200
    assert body["progress"]["valid"] == 40 and body["progress"]["invalid"] == 160
    rows = result_rows(deep_stack, body["result_download_url"])
    assert [r[0] for r in rows[1:]] == emails  # each row exactly once, in upload order
    charged = deep_stack.sql("SELECT SUM(amount) FROM billing_ledgerentry WHERE reference LIKE ?", f"{job['id']}:%")
    assert charged == -200
    assert deep_farm.stats.peak[SLOW] <= 3
    assert deep_farm.stats.commands["DATA"] == 0
