"""/metrics and /readyz on the production stack: gunicorn with several workers and a real qcluster.

Both share PROMETHEUS_MULTIPROC_DIR, so whichever worker answers a scrape reports what every
process counted: each scrape below must agree exactly.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from bench.procs import Processes, free_port, wait_for_port
from tests.support.dns_server import DnsServer
from tests.support.metrics import Samples, parse, value
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e
TOKEN = "e2e-metrics-token"
WORKERS = 3


@dataclass
class Stack:
    base_url: str
    api_key: str

    def get(self, path: str, **headers: str) -> requests.Response:
        return requests.get(self.base_url + path, headers=headers, timeout=30)

    def verify(self, email: str) -> None:
        auth = {"Authorization": f"Bearer {self.api_key}"}
        response = requests.post(f"{self.base_url}/v1/verify", json={"email": email}, headers=auth, timeout=30)
        assert response.status_code == 200, response.text

    def scrape(self) -> Samples:
        response = self.get("/metrics", Authorization=f"Bearer {TOKEN}")
        assert response.status_code == 200, response.text
        return parse(response.text)


def stack_env(tmp: Path, dns_server: DnsServer) -> dict[str, str]:
    (tmp / "prometheus").mkdir()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
        "MEDIA_ROOT": str(tmp / "media"),
        "VERIFIER_DNS_NAMESERVERS": dns_server.address,
        "METRICS_TOKEN": TOKEN,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp / "prometheus"),
        "BULK_CHUNK_SIZE": "5",
        "Q_WORKERS": "1",
        "LOG_LEVEL": "WARNING",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, dns_server: DnsServer, migrated_sqlite: Path) -> Iterator[Stack]:
    port, tmp = free_port(), tmp_path_factory.mktemp("metrics")
    with Processes(env=stack_env(tmp, dns_server)) as processes:
        shutil.copyfile(migrated_sqlite, tmp / "db.sqlite3")
        argv = ["--plan", "starter", "--credits", "1000", "--json"]
        opened = json.loads(processes.manage("create_account", "--email", "ops@example.com", *argv))
        argv = ["-c", "config/gunicorn.conf.py", "-b", f"127.0.0.1:{port}", "-w", str(WORKERS)]
        server = processes.start(sys.executable, "-m", "gunicorn", *argv)
        processes.start(sys.executable, "manage.py", "qcluster")
        wait_for_port(port, process=server)
        yield Stack(f"http://127.0.0.1:{port}", opened["api_key"])


def test_readyz_is_ok_with_a_live_qcluster(stack: Stack) -> None:
    wait_until(lambda: stack.get("/readyz").status_code == 200, "/readyz", 30, every=0.2)
    assert stack.get("/readyz").json() == {
        "status": "ok",
        "checks": {"database": "ok", "storage": "ok", "workers": "ok", "dns": "ok"},
    }


def test_every_worker_reports_every_workers_verifications(stack: Stack) -> None:
    name, labels = "verifier_verifications_total", {"status": "valid", "source": "api"}
    before = value(stack.scrape(), name, **labels)
    for n in range(12):
        stack.verify(f"user{n}@good.com")
    counts = {value(stack.scrape(), name, **labels) for _ in range(2 * WORKERS)}
    assert counts == {before + 12}


def test_a_bulk_job_run_by_qcluster_moves_the_bulk_counters(stack: Stack) -> None:
    before = stack.scrape()
    files = {"file": ("list.csv", b"email\n" + b"".join(b"x%d@good.com\n" % n for n in range(12)), "text/csv")}
    auth = {"Authorization": f"Bearer {stack.api_key}"}
    job = requests.post(f"{stack.base_url}/v1/verify/bulk", files=files, headers=auth, timeout=30).json()
    status = lambda: stack.get(f"/v1/jobs/{job['id']}", **auth).json()["status"]  # noqa: E731
    wait_until(lambda: status() == "completed", "the job to complete", 60, every=0.2)
    after = stack.scrape()
    assert value(after, "verifier_bulk_rows_total") == value(before, "verifier_bulk_rows_total") + 12
    name, labels = "verifier_verifications_total", {"status": "valid", "source": "bulk"}
    assert value(after, name, **labels) == value(before, name, **labels) + 12
