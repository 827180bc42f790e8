"""End to end: runserver and a real qcluster, driven over HTTP, on the suite's kind of database
(SQLite; or PostgreSQL with Redis as queue and cache: tests/support/stack_db.py).

One stack is shared by the tests of this module (migrating and opening an account
cost seconds). Lease and django-q2 retry are short here so a killed worker's chunk
is taken over within seconds instead of minutes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.procs import group_members
from docs.verify_signature import verify_signature
from tests.jobs.conftest import Receiver
from tests.support.bulk_jobs import addresses
from tests.support.dns_server import DnsServer
from tests.support.e2e_stack import Stack, live_stack, result_rows
from tests.support.stack_db import StackDatabases
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, dns_server: DnsServer, stack_databases: StackDatabases
) -> Iterator[Stack]:
    with live_stack(tmp_path_factory.mktemp("e2e"), dns_server, stack_databases) as stack:
        yield stack


def test_upload_poll_download_and_signed_callback(stack: Stack, receiver: Receiver, dns_server: DnsServer) -> None:
    emails = addresses(90) + ["jane@good.com"]
    job = stack.upload(("email\n" + "\n".join(emails)).encode(), receiver.url)
    body = stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=30)
    assert body["progress"]["processed"] == body["progress"]["total"] == 91
    assert body["progress"]["valid"] == 1
    rows = result_rows(stack, body["result_download_url"])
    assert [r[0] for r in rows[1:]] == emails
    wait_until(lambda: receiver.received, "the callback", 10)
    (callback,) = receiver.received
    assert verify_signature(callback.body, callback.headers["X-Service-Signature"], stack.signing_secret)
    assert callback.json()["job_id"] == job["id"]


def test_result_links_of_web_and_worker_follow_the_port(stack: Stack, receiver: Receiver) -> None:
    job = stack.upload(b"email\njane@good.com\n", receiver.url)
    body = stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=30)
    wait_until(lambda: receiver.received, "the callback", 10)
    site = f"http://localhost:{stack.base_url.rsplit(':', 1)[1]}/"
    (callback,) = receiver.received
    for link in (body["result_download_url"], callback.json()["result_url"]):
        assert link.startswith(site)
        assert len(result_rows(stack, link)) == 2


def test_killed_worker_loses_nothing_and_charges_each_row_once(
    stack: Stack, receiver: Receiver, dns_server: DnsServer
) -> None:
    dns_server.delay = 0.2  # ten chunks of a second or so: the kill lands mid-job
    emails = addresses(300)
    job = stack.upload("\n".join(emails).encode(), receiver.url)
    stack.wait_for(job["id"], lambda b: b["progress"]["processed"] > 0, timeout=20)
    stack.kill_worker()
    interrupted = stack.job(job["id"])
    assert interrupted["status"] == "processing"
    stack.start_worker()
    body = stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=40)
    assert body["progress"]["processed"] == 300
    rows = result_rows(stack, body["result_download_url"])
    assert [r[0] for r in rows[1:]] == emails  # each row exactly once, in upload order
    charged = stack.sql("SELECT SUM(amount) FROM billing_ledgerentry WHERE reference LIKE ?", f"{job['id']}:%")
    assert charged == -300
    balance = stack.sql("SELECT credit_balance FROM accounts_account WHERE public_id IS NOT NULL")
    assert balance == stack.sql("SELECT SUM(amount) FROM billing_ledgerentry")


def test_bulk_workers_run_at_a_lower_priority_than_the_web(stack: Stack, receiver: Receiver) -> None:
    job = stack.upload(b"a@good.com\n", receiver.url)
    stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=30)
    assert stack.worker is not None
    cluster = group_members(stack.worker.pid)  # qcluster and its worker processes
    base = os.getpriority(os.PRIO_PROCESS, 0)  # the suite's own: it may itself run under `nice`
    assert max(os.getpriority(os.PRIO_PROCESS, pid) for pid in cluster) == max(base, 10)  # BULK_WORKER_NICENESS
    assert stack.web is not None
    assert os.getpriority(os.PRIO_PROCESS, stack.web.pid) == base  # the web server, as started
    # Each runs in a session of its own; with Linux's autogroups the kernel shares the CPU between
    # sessions first, so the worker's session is lowered too (lib/niceness.py), the web's is not.
    if autogroup_niceness(stack.worker.pid) is not None:
        assert autogroup_niceness(stack.worker.pid) == 10
        assert autogroup_niceness(stack.web.pid) == 0


def autogroup_niceness(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except OSError:
        return None
