"""Measure a 100,000-row bulk job end to end: runserver + qcluster on a file SQLite DB.

    .venv/bin/python bench/bulk_100k.py

Prints upload time, time to completed, and the peak RSS of the qcluster processes.
DNS is the loopback test server answering after 2 ms, over 20,000 distinct domains
(the figures issue 3 asks for). `--domains N` and `--delay-ms N` change them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import django
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from tests.jobs.test_e2e import Stack, _wait_for_port, free_port  # noqa: E402
from tests.support.dns_server import MX, DnsServer  # noqa: E402


def peak_rss_kib(root_pid: int) -> int:
    """Largest VmHWM among the process group's members (each worker is its own process)."""
    peak = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != root_pid:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except (OSError, ProcessLookupError):
            continue
    return peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--domains", type=int, default=20_000)
    parser.add_argument("--delay-ms", type=float, default=2.0)
    args = parser.parse_args()
    zone = {f"d{i}.com": MX(f"mx.d{i}.com") for i in range(args.domains)}
    with DnsServer(zone=zone, delay=args.delay_ms / 1000) as dns, tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3",
            "MEDIA_ROOT": f"{tmp}/media",
            "SITE_URL": f"http://127.0.0.1:{port}",
            "VERIFIER_DNS_NAMESERVERS": dns.address,
            "LOG_LEVEL": "WARNING",
        }
        stack = Stack(env=env, base_url=f"http://127.0.0.1:{port}", database=Path(tmp) / "bench.sqlite3")
        stack.manage("migrate", "--noinput", "-v0")
        opened = json.loads(
            stack.manage("create_account", "--email", "b@example.com", "--plan", "pro", "--credits", "200000", "--json")
        )
        stack.api_key = opened["api_key"]
        try:
            stack.start("runserver", "--noreload", f"127.0.0.1:{port}")
            stack.start_worker()
            _wait_for_port(port)
            rows = "".join(f"user{i}@d{i % args.domains}.com\n" for i in range(args.rows))
            content = ("email\n" + rows).encode()
            started = time.monotonic()
            response = requests.post(
                f"{stack.base_url}/v1/verify/bulk",
                files={"file": ("big.csv", content, "text/csv")},
                headers=stack.auth(),
                timeout=120,
            )
            uploaded = time.monotonic()
            assert response.status_code == 202, response.text
            job_id = response.json()["id"]
            peak = 0
            while (body := stack.job(job_id))["status"] not in ("completed", "failed"):
                assert stack.worker is not None
                peak = max(peak, peak_rss_kib(stack.worker.pid))
                time.sleep(0.5)
            done = time.monotonic()
            rows = requests.get(body["result_download_url"], timeout=60).content.count(b"\n") - 1
            print(
                f"file {len(content) / 1e6:.1f} MB; upload {uploaded - started:.1f} s; "
                f"end to end {done - started:.1f} s; status {body['status']}; result rows {rows}; "
                f"worker peak RSS {peak / 1024:.0f} MiB"
            )
        finally:
            stack.stop()


if __name__ == "__main__":
    main()
