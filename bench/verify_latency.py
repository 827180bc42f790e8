"""Server time of POST /v1/verify when the domain is in the domain cache (issue 2's figure).

    .venv/bin/python bench/verify_latency.py [--requests 300]

gunicorn (one worker) on a fresh file SQLite database, the loopback DNS server answering
every name with an MX. Each request verifies a new address on one warmed domain, so the
verdict cache misses and the domain cache hits; then the same addresses again (verdict
cache hits). Prints the median and p95 of `response_time_ms` and of the client's wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.dns_server import MX, DnsServer  # noqa: E402

PY = sys.executable


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    with DnsServer(default=lambda name: MX("mx." + name)) as dns, tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{tmp}/latency.sqlite3",
            "VERIFIER_DNS_NAMESERVERS": dns.address,
            "DEBUG": "0",
            "LOG_LEVEL": "WARNING",
        }

        def manage(*argv: str) -> str:
            return subprocess.run(
                [PY, "manage.py", *argv], env=env, cwd=ROOT, check=True, capture_output=True, text=True
            ).stdout

        manage("migrate", "-v0")
        account = json.loads(
            manage(
                "create_account",
                "--email",
                "latency@example.com",
                "--plan",
                "enterprise",
                "--credits",
                "100000",
                "--json",
            )
        )
        server = subprocess.Popen(
            [PY, "-m", "gunicorn", "config.wsgi", "-b", f"127.0.0.1:{args.port}", "-w", "1"], env=env, cwd=ROOT
        )
        try:
            _wait(args.port)
            verify = _client(args.port, account["api_key"])
            verify("warm-up@acme-corp.com")
            fresh = [verify(f"person{i}@acme-corp.com") for i in range(args.requests)]
            cached = [verify(f"person{i}@acme-corp.com") for i in range(args.requests)]
        finally:
            server.terminate()
            server.wait()
    _report("domain-cache hit, verdict-cache miss", fresh)
    _report("verdict-cache hit", cached)


def _client(port: int, api_key: str):  # type: ignore[no-untyped-def]
    def verify(email: str) -> tuple[int, float]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/verify",
            data=json.dumps({"email": email}).encode(),
            headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"},
        )
        started = time.perf_counter()
        body = json.loads(urllib.request.urlopen(request).read())
        wall = (time.perf_counter() - started) * 1000
        time.sleep(0.006)  # stay under the enterprise plan's 200 requests a second
        return body["response_time_ms"], wall

    return verify


def _wait(port: int) -> None:
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/openapi.json")
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("gunicorn did not start")


def _report(label: str, samples: list[tuple[int, float]]) -> None:
    server = sorted(s for s, _ in samples)
    wall = sorted(w for _, w in samples)
    p95 = lambda xs: xs[int(len(xs) * 0.95) - 1]  # noqa: E731
    print(
        f"{label}: response_time_ms median {statistics.median(server):.0f} p95 {p95(server):.0f}; "
        f"client wall median {statistics.median(wall):.1f} ms p95 {p95(wall):.1f} ms"
    )


if __name__ == "__main__":
    main()
