"""End to end, deep: runserver and a real qcluster against the MX farm, driven over HTTP, on the
suite's kind of database (SQLite; PostgreSQL with Redis: tests/support/stack_db.py): every row of
the verdict table single and bulk, and the worker killed (SIGKILL) mid-job."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.jobs.conftest import Receiver
from tests.support.deep import DOMAINS, HELO, farm_zone
from tests.support.dns_server import DnsServer
from tests.support.e2e_stack import Stack, live_stack, past_the_rate_limit, result_rows
from tests.support.mx_farm import MxFarm
from tests.support.stack_db import StackDatabases

pytestmark = pytest.mark.e2e

SLOW = "127.0.0.13"  # alice exists; every reply 50 ms late


@pytest.fixture(scope="module")
def deep_stack(
    tmp_path_factory: pytest.TempPathFactory, dns_server: DnsServer, stack_databases: StackDatabases, farm: MxFarm
) -> Iterator[Stack]:
    slots = tmp_path_factory.mktemp("smtp-slots")
    with live_stack(
        tmp_path_factory.mktemp("e2e-deep"),
        dns_server,
        stack_databases,
        VERIFIER_DEEP_MODE="1",
        VERIFIER_SMTP_HELO=HELO,
        VERIFIER_SMTP_PORT=str(farm.port),
        VERIFIER_SMTP_TIMEOUT="10",  # a loaded machine must not turn a slow answer into `unknown`
        VERIFIER_SMTP_ALLOW_PRIVATE_NETWORKS="1",
        VERIFIER_SMTP_LOCK_DIR=str(slots),
        VERIFIER_SMTP_GREYLIST_RETRY_SECONDS="1",
        BULK_CHUNK_LEASE_SECONDS="20",  # a chunk's sessions get half of it
        BULK_DEEP_BATCH_ROWS="60",  # two chunks of 30 a batch: a job of 200 rows is asked in four
        Q_WORKERS="3",  # the default: two deep workers, one kept for fast jobs
    ) as stack:
        yield stack


def rows_on(dns: DnsServer, domains: int, per_domain: int) -> list[str]:
    tag = uuid.uuid4().hex[:6]
    names = [f"d{i}-{tag}.deepfarm.net" for i in range(domains)]
    farm_zone(dns, dict.fromkeys(names, [SLOW]))
    locals_ = ["alice", *(f"nobody{j}" for j in range(per_domain - 1))]
    return [f"{local}@{name}" for name in names for local in locals_]


# Every row of the verdict table (docs/deep.md): address -> (status, sub_status, smtp_valid,
# is_catch_all) as a single request answers it, and a bulk job where it differs.
EVERY_ROW: dict[str, tuple[Any, ...]] = {
    "alice@mailbox": ("valid", None, True, False),
    "info@mailbox": ("risky", "role_based", True, False),
    "whoever@anything": ("risky", "catch_all", None, True),
    "nobody@mailbox": ("invalid", "mailbox_not_found", False, False),
    "gone@mailbox": ("invalid", "mailbox_disabled", False, False),
    "full@mailbox": ("risky", "mailbox_full", None, False),
    "quota@mailbox": ("risky", "mailbox_full", None, False),
    "alice@greylist": ("unknown", "greylisted", None, None),
    "alice@listed": ("unknown", "smtp_blocked", None, None),
    "alice@policy": ("unknown", "smtp_blocked", None, None),
    "alice@badsender": ("unknown", "smtp_blocked", None, None),
    "alice@alldead": ("unknown", "smtp_unreachable", None, None),
    "alice@deadfirst": ("valid", None, True, False),
    "alice@tls": ("valid", None, True, False),
    "alice@onercpt": ("valid", None, True, False),
}
# A bulk job asks a greylisted row again later (VERIFIER_SMTP_GREYLIST_RETRY_SECONDS): it clears.
BULK_DIFFERS = {"alice@greylist": ("valid", None, True, False)}


def every_row_on_fresh_domains(dns: DnsServer) -> dict[str, str]:
    """EVERY_ROW's addresses on domains no test asked before (the shared caches must not answer for
    the farm): each fresh address -> its row's key."""
    tag = uuid.uuid4().hex[:6]
    fresh = {name.split(".")[0]: f"{name.split('.')[0]}-{tag}.deepfarm.net" for name in DOMAINS}
    farm_zone(dns, {fresh[name.split(".")[0]]: addresses for name, addresses in DOMAINS.items()})
    return {f"{key.split('@')[0]}@{fresh[key.split('@')[1]]}": key for key in EVERY_ROW}


def verify_deep(stack: Stack, email: str) -> requests.Response:
    """POST /v1/verify, asked again while the key's one-second rate window refuses it (429)."""
    body = {"email": email, "validation_mode": "deep"}
    return past_the_rate_limit(
        lambda: requests.post(f"{stack.base_url}/v1/verify", json=body, headers=stack.auth(), timeout=60), email
    )


def test_every_verdict_row_single_and_bulk_with_a_real_worker(
    deep_stack: Stack, deep_farm: MxFarm, receiver: Receiver, dns_server: DnsServer
) -> None:
    for email, key in every_row_on_fresh_domains(dns_server).items():
        response = verify_deep(deep_stack, email)
        assert response.status_code == 200, response.text
        body = response.json()
        got = (body["status"], body["sub_status"], body["checks"]["smtp_valid"], body["checks"]["is_catch_all"])
        assert (key, got) == (key, EVERY_ROW[key])
    bulk_rows = every_row_on_fresh_domains(dns_server)
    job = deep_stack.upload("\n".join(bulk_rows).encode(), receiver.url, validation_mode="deep")
    body = deep_stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=180)
    header, *rows = result_rows(deep_stack, body["result_download_url"])
    columns = [header.index(name) for name in ("status", "sub_status", "smtp_valid", "is_catch_all")]
    cell = {"true": True, "false": False, "": None}
    for row in rows:
        key = bulk_rows[row[0]]
        got = (row[columns[0]], row[columns[1]] or None, *(cell[row[i]] for i in columns[2:]))
        assert (key, got) == (key, BULK_DIFFERS.get(key, EVERY_ROW[key]))
    assert len(rows) == len(bulk_rows) and deep_farm.stats.commands["DATA"] == 0
    charged = deep_stack.sql("SELECT SUM(amount) FROM billing_ledgerentry WHERE reference LIKE ?", f"{job['id']}:%")
    assert charged == -len(bulk_rows)


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


def test_a_jobs_batches_run_in_two_worker_processes_at_once_within_an_addresss_cap(
    deep_stack: Stack, deep_farm: MxFarm, receiver: Receiver, dns_server: DnsServer
) -> None:
    """The machine's two deep workers run a large job's batches at the same time (docs/deep.md, "Bulk
    jobs"); an address with more rows than a batch is asked from both processes, and its sessions at
    once stay within the cap they share (the lock files)."""
    emails = rows_on(dns_server, 40, 5)  # 200 rows on one slow address: four batches of at most 60
    job = deep_stack.upload("\n".join(emails).encode(), receiver.url, validation_mode="deep")
    held = "SELECT COUNT(DISTINCT batch) FROM jobs_chunk WHERE job_id = ? AND state = 'running'"
    most = [0]

    def completed(body: dict[str, Any]) -> bool:
        most[0] = max(most[0], deep_stack.sql(held, job["id"]))
        return bool(body["status"] == "completed")

    body = deep_stack.wait_for(job["id"], completed, timeout=180)
    assert most[0] == 2  # two batches held at once, never more than the two deep workers
    assert body["progress"]["processed"] == 200
    assert body["progress"]["valid"] == 40 and body["progress"]["invalid"] == 160
    charged = deep_stack.sql("SELECT SUM(amount) FROM billing_ledgerentry WHERE reference LIKE ?", f"{job['id']}:%")
    assert charged == -200
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
