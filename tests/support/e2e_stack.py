"""A live stack for end-to-end tests: runserver and real qcluster processes (as `make run` starts
them), driven over HTTP, on a fresh database of the suite's kind (SQLite; or PostgreSQL with Redis
as queue and cache: tests/support/stack_db.py), with one starter account."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from bench.procs import Processes, free_port, wait_for_port
from tests.support.dns_server import DnsServer
from tests.support.stack_db import StackDatabase, StackDatabases
from tests.support.waiting import wait_until


@dataclass
class Stack:
    processes: Processes
    base_url: str
    database: StackDatabase
    api_key: str = ""
    signing_secret: str = ""
    web: subprocess.Popen[bytes] | None = None
    worker: subprocess.Popen[bytes] | None = None

    def start_worker(self) -> None:
        self.worker = self.processes.start(sys.executable, "manage.py", "qcluster")

    def kill_worker(self) -> None:
        assert self.worker is not None
        os.killpg(self.worker.pid, signal.SIGKILL)
        self.worker.wait(timeout=10)

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    def upload(self, content: bytes, callback_url: str, **parts: str) -> dict[str, Any]:
        def send() -> requests.Response:
            files = {"file": ("list.csv", content, "text/csv")}
            data = {"callback_url": callback_url, **parts}
            return requests.post(
                f"{self.base_url}/v1/verify/bulk", files=files, data=data, headers=self.auth(), timeout=30
            )

        response = past_the_rate_limit(send, "an upload")
        assert response.status_code == 202, response.text
        return dict(response.json())

    def job(self, job_id: str) -> dict[str, Any]:
        def send() -> requests.Response:
            return requests.get(f"{self.base_url}/v1/jobs/{job_id}", headers=self.auth(), timeout=10)

        response = past_the_rate_limit(send, f"a read of job {job_id}")
        assert response.status_code == 200, response.text
        return dict(response.json())

    def wait_for(self, job_id: str, predicate: Any, timeout: float) -> dict[str, Any]:
        seen: list[dict[str, Any]] = [{}]

        def there() -> dict[str, Any] | None:
            seen[0] = self.job(job_id)
            return seen[0] if predicate(seen[0]) else None

        try:
            return wait_until(there, f"job {job_id}", timeout, every=0.1)
        except TimeoutError as late:
            raise AssertionError(f"{late}: {seen[0]}") from None

    def sql(self, query: str, *params: object) -> Any:
        return self.database.sql(query, *params)


def past_the_rate_limit(send: Callable[[], requests.Response], what: str) -> requests.Response:
    """`send()`, sent again while the key's one-second rate window refuses it (429), as a client that
    honours Retry-After does: a test that verifies, uploads and polls at once may pass the plan's rate."""

    def answered() -> requests.Response | None:
        response = send()
        return None if response.status_code == 429 else response

    return wait_until(answered, f"{what} past the key's rate limit", 30, every=0.1)


@contextmanager
def live_stack(tmp: Path, dns_server: DnsServer, databases: StackDatabases, **extra_env: str) -> Iterator[Stack]:
    """runserver and a qcluster on a fresh database of the suite's kind, with one starter account."""
    port = free_port()
    with databases.fresh(tmp) as database, _live_stack(tmp, port, dns_server, database, extra_env) as stack:
        yield stack


@contextmanager
def _live_stack(
    tmp: Path, port: int, dns_server: DnsServer, database: StackDatabase, extra_env: dict[str, str]
) -> Iterator[Stack]:
    env = {
        **{k: v for k, v in os.environ.items() if k != "REDIS_URL"},
        **database.env,
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
        **extra_env,
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.pop("SITE_URL", None)
    with Processes(env=env) as processes:
        stack = Stack(processes, base_url=f"http://127.0.0.1:{port}", database=database)
        account = ("--email", "e2e@example.com", "--plan", "starter", "--credits", "5000", "--json")
        opened = json.loads(processes.manage("create_account", *account))
        stack.api_key, stack.signing_secret = opened["api_key"], opened["signing_secret"]
        stack.web = processes.start(sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}")
        stack.start_worker()
        wait_for_port(port, process=stack.web)
        yield stack


def result_rows(stack: Stack, url: str) -> list[list[str]]:
    response = requests.get(url, timeout=30)
    assert response.status_code == 200
    return list(csv.reader(io.StringIO(response.content.decode("utf-8"))))
