"""What one `POST /v1/verify` costs the machine, request by request, on PostgreSQL and Redis.

    python -m bench.verify_cpu [REQUESTS] [--sqlite]

A fresh stack's database and Redis (bench/stack.py's, PostgreSQL `verifier_bench` and Redis db 13;
`--sqlite`: a fresh SQLite file, no Redis), migrated; then in this process, through Django's test
client (no HTTP server, no threads), one account's key verifies REQUESTS new addresses (2,000 by
default) one after another, on 20 domains the loopback DNS server answered before the clock. Prints
one JSON line: per request, the CPU this process used (Django and the view), the CPU PostgreSQL's
processes and Redis's used meanwhile (every `postgres` and `redis-server` process of the machine:
run it on a quiet one), and the wall time. Sequential requests on one connection: a steadier
figure of a request's own work than `single`'s concurrent load, which measures the locks too.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from bench.dnsd import start_dns
from bench.procs import Processes, cpu_seconds
from bench.stack import Stack

DOMAINS = 20
WARM = 300  # requests before the clock: every domain's answer cached, the connections open


def main(argv: list[str]) -> None:
    requests = int(next((arg for arg in argv if arg.isdigit()), "2000"))
    backend = "sqlite" if "--sqlite" in argv else "postgres"
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, 2.0)
        with Stack(backend, dns.address) as stack:
            os.environ.update(stack.processes.env)
            print(json.dumps({"backend": backend, "requests": requests, **_measured(requests)}))


def _measured(requests: int) -> dict[str, float]:
    import django

    django.setup()
    from django.test import Client

    from accounts.models import Plan
    from accounts.services import account_open
    from billing.services import credits_grant

    Plan.objects.update(requests_per_second=10**6)
    opened = account_open(
        email="verify-cpu@bench.example", password="bench-password-1", plan_code="pro", issue_key=True
    )
    credits_grant(account=opened.account, amount=WARM + requests)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {opened.api_key}")

    def verify(n: int) -> None:
        body = json.dumps({"email": f"user{n}@domain{n % DOMAINS}.example"})
        response = client.post("/v1/verify", data=body, content_type="application/json")
        assert response.status_code == 200, response.content

    for n in range(WARM):
        verify(n)
    database, redis = _named("postgres"), _named("redis-server")
    before = (time.process_time(), cpu_seconds(database), cpu_seconds(redis), time.perf_counter())
    for n in range(WARM, WARM + requests):
        verify(n)
    after = (time.process_time(), cpu_seconds(database), cpu_seconds(redis), time.perf_counter())
    django_ms, database_ms, redis_ms, wall_ms = ((b - a) / requests * 1000 for a, b in zip(before, after, strict=True))
    return {
        "django_cpu_ms": round(django_ms, 3),
        "postgres_cpu_ms": round(database_ms, 3),
        "redis_cpu_ms": round(redis_ms, 3),
        "wall_ms": round(wall_ms, 3),
        "load": os.getloadavg()[0],
    }


def _named(name: str) -> list[int]:
    """The machine's processes whose command name starts with `name`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().startswith(name):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


if __name__ == "__main__":
    main(sys.argv[1:])
