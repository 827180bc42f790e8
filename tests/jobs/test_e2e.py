"""End to end: runserver and a real qcluster on a file SQLite database, driven over HTTP.

One stack is shared by the tests of this module (migrating and opening an account
cost seconds). Lease and django-q2 retry are short here so a killed worker's chunk
is taken over within seconds instead of minutes.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from bench.procs import free_port, group_members, wait_for_port
from docs.verify_signature import verify_signature
from tests.jobs.conftest import Receiver
from tests.support.dns_server import DnsServer

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Stack:
    env: dict[str, str]
    base_url: str
    database: Path
    api_key: str = ""
    signing_secret: str = ""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    worker: subprocess.Popen[bytes] | None = None

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, timeout=120
        )
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout.decode()

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        # A session of its own: qcluster's workers are child processes, killed with their group.
        process = subprocess.Popen(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.processes.append(process)
        return process

    def start_worker(self) -> None:
        self.worker = self.start("qcluster")

    def kill_worker(self) -> None:
        assert self.worker is not None
        os.killpg(self.worker.pid, signal.SIGKILL)
        self.worker.wait(timeout=10)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    def upload(self, content: bytes, callback_url: str) -> dict[str, Any]:
        files = {"file": ("list.csv", content, "text/csv")}
        response = requests.post(
            f"{self.base_url}/v1/verify/bulk",
            files=files,
            data={"callback_url": callback_url},
            headers=self.auth(),
            timeout=30,
        )
        assert response.status_code == 202, response.text
        return dict(response.json())

    def job(self, job_id: str) -> dict[str, Any]:
        response = requests.get(f"{self.base_url}/v1/jobs/{job_id}", headers=self.auth(), timeout=10)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def wait_for(self, job_id: str, predicate: Any, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = self.job(job_id)
            if predicate(body):
                return body
            time.sleep(0.1)
        raise AssertionError(f"job {job_id} did not get there in {timeout} s: {body}")

    def sql(self, query: str, *params: object) -> Any:
        with sqlite3.connect(self.database) as connection:
            return connection.execute(query, params).fetchone()[0]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, dns_server: DnsServer) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("e2e")
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp / 'e2e.sqlite3'}",
        "MEDIA_ROOT": str(tmp / "media"),
        "PORT": str(port),  # SITE_URL follows it, as with `make run PORT=…`
        "VERIFIER_DNS_NAMESERVERS": dns_server.address,
        "VERIFIER_DNS_TIMEOUT": "3",
        "CALLBACK_ALLOW_PRIVATE_NETWORKS": "1",
        "CALLBACK_RETRY_BASE_SECONDS": "0.5",
        "BULK_CHUNK_SIZE": "30",
        "BULK_CHUNK_LEASE_SECONDS": "3",
        "Q_WORKERS": "2",
        "Q_TIMEOUT": "10",
        "Q_RETRY": "11",
        "LOG_LEVEL": "WARNING",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.pop("SITE_URL", None)
    stack = Stack(env=env, base_url=f"http://127.0.0.1:{port}", database=tmp / "e2e.sqlite3")
    stack.manage("migrate", "--noinput", "-v0")
    opened = json.loads(
        stack.manage("create_account", "--email", "e2e@example.com", "--plan", "starter", "--credits", "5000", "--json")
    )
    stack.api_key, stack.signing_secret = opened["api_key"], opened["signing_secret"]
    try:
        stack.start("runserver", "--noreload", f"127.0.0.1:{port}")
        stack.start_worker()
        wait_for_port(port)
        yield stack
    finally:
        stack.stop()


def addresses(count: int) -> list[str]:
    """Each on a domain of its own, so every chunk waits on (slow) DNS."""
    tag = uuid.uuid4().hex[:6]
    return [f"user{i}@d{i}-{tag}.com" for i in range(count)]


def result_rows(stack: Stack, url: str) -> list[list[str]]:
    response = requests.get(url, timeout=30)
    assert response.status_code == 200
    return list(csv.reader(io.StringIO(response.content.decode("utf-8"))))


def test_upload_poll_download_and_signed_callback(stack: Stack, receiver: Receiver, dns_server: DnsServer) -> None:
    emails = addresses(90) + ["jane@good.com"]
    job = stack.upload(("email\n" + "\n".join(emails)).encode(), receiver.url)
    body = stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=30)
    assert body["progress"]["processed"] == body["progress"]["total"] == 91
    assert body["progress"]["valid"] == 1
    rows = result_rows(stack, body["result_download_url"])
    assert [r[0] for r in rows[1:]] == emails
    deadline = time.monotonic() + 10
    while not receiver.received and time.monotonic() < deadline:
        time.sleep(0.05)
    (callback,) = receiver.received
    assert verify_signature(callback.body, callback.headers["X-Service-Signature"], stack.signing_secret)
    assert callback.json()["job_id"] == job["id"]


def test_result_links_of_web_and_worker_follow_the_port(stack: Stack, receiver: Receiver) -> None:
    job = stack.upload(b"email\njane@good.com\n", receiver.url)
    body = stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=30)
    deadline = time.monotonic() + 10
    while not receiver.received and time.monotonic() < deadline:
        time.sleep(0.05)
    site = f"http://localhost:{stack.base_url.rsplit(':', 1)[1]}/"
    (callback,) = receiver.received
    for link in (body["result_download_url"], callback.json()["result_url"]):
        assert link.startswith(site)
        assert len(result_rows(stack, link)) == 2


def test_killed_worker_loses_nothing_and_charges_each_row_once(
    stack: Stack, receiver: Receiver, dns_server: DnsServer
) -> None:
    dns_server.delay = 0.4
    emails = addresses(600)
    job = stack.upload("\n".join(emails).encode(), receiver.url)
    stack.wait_for(job["id"], lambda b: b["progress"]["processed"] > 0, timeout=20)
    stack.kill_worker()
    interrupted = stack.job(job["id"])
    assert interrupted["status"] == "processing"
    stack.start_worker()
    body = stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=40)
    assert body["progress"]["processed"] == 600
    rows = result_rows(stack, body["result_download_url"])
    assert [r[0] for r in rows[1:]] == emails  # each row exactly once, in upload order
    charged = stack.sql("SELECT SUM(amount) FROM billing_ledgerentry WHERE reference LIKE ?", f"{job['id']}:%")
    assert charged == -600
    balance = stack.sql("SELECT credit_balance FROM accounts_account WHERE public_id IS NOT NULL")
    assert balance == stack.sql("SELECT SUM(amount) FROM billing_ledgerentry")


def test_bulk_workers_run_at_a_lower_priority_than_the_web(stack: Stack, receiver: Receiver) -> None:
    job = stack.upload(b"a@good.com\n", receiver.url)
    stack.wait_for(job["id"], lambda b: b["status"] == "completed", timeout=30)
    assert stack.worker is not None
    cluster = group_members(stack.worker.pid)  # qcluster and its worker processes
    assert max(os.getpriority(os.PRIO_PROCESS, pid) for pid in cluster) == 10  # BULK_WORKER_NICENESS
    assert os.getpriority(os.PRIO_PROCESS, stack.processes[0].pid) == 0  # the web server
    # Each runs in a session of its own; with Linux's autogroups the kernel shares the CPU between
    # sessions first, so the worker's session is lowered too (lib/priority.py), the web's is not.
    if autogroup_niceness(stack.worker.pid) is not None:
        assert autogroup_niceness(stack.worker.pid) == 10
        assert autogroup_niceness(stack.processes[0].pid) == 0


def autogroup_niceness(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except OSError:
        return None
