"""Scenario ``single``: ``POST /v1/verify`` under concurrent load, against the framework floor.

gunicorn (sync, 2 workers) with ``bench.settings`` on a fresh SQLite stack; every plan's
rate raised to 1,000,000 a second so the limiter runs but never refuses. Load comes from
``bench.loadgen`` processes (fixed concurrency, a fixed number of requests). Sub-scenarios:

- floor: ``POST /v1/_floor`` (authenticated, throttled, does nothing), one key;
- verify, one key, domain cached: a new address each request, on 20 warmed domains;
- verify, verdict cached: 200 warmed addresses, repeated;
- verify, 20 accounts: a new address each request on the warmed domains, keys in turn;
- verify, uncached domains: a new domain each request (a real DNS query through the delay).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from bench.procs import PY, ROOT, stop_group
from bench.results import Measurement, percentile
from bench.stack import Stack

WARM_DOMAINS = 20
WARM_ADDRESSES = 200
ACCOUNTS = 20
LOADGEN_PROCESSES = 2
THREADS_PER_PROCESS = 4  # concurrency 8 in all
FLOOR = "floor, one key"
DOMAIN_CACHED = "verify, one key, domain cached"

OPEN_ACCOUNTS = """
import json
from accounts.services import account_open
from billing.services import credits_grant
from accounts.models import Plan
Plan.objects.update(requests_per_second=10**6)
opened = [account_open(email=f"single{i}@bench.example", password="bench-password-1", plan_code="pro",
                       issue_key=True) for i in range(%d)]
for one in opened:
    credits_grant(account=one.account, amount=10**7)
print(json.dumps([one.api_key for one in opened]))
"""


@dataclass(frozen=True)
class Case:
    name: str
    path: str
    request: Callable[[int], tuple[str, str]]  # n -> (api key, email)


def run(
    dns_address: str,
    requests_per_case: int,
    backend: str = "sqlite",
    *,
    settings_module: str = "bench.settings",
    only: Collection[str] = (),
    inspect: Callable[[Stack], dict[str, object]] | None = None,
) -> list[Measurement]:
    """Every case, or those named in `only`, on a fresh stack of `settings_module`; `inspect` reads the
    stack once they are measured, and what it says goes into each measurement's extra."""
    tag = uuid.uuid4().hex[:6]
    with Stack(backend, dns_address, settings_module=settings_module) as stack:
        keys: list[str] = json.loads(stack.shell(OPEN_ACCOUNTS % ACCOUNTS).strip().splitlines()[-1])
        stack.start_web(workers=2)
        key = keys[0]
        warm_domain = lambda n: f"cw{n % WARM_DOMAINS}-{tag}.com"  # noqa: E731
        warm_address = lambda n: f"known{n % WARM_ADDRESSES}@{warm_domain(n)}"  # noqa: E731
        _warm(stack.port, [(key, warm_address(n)) for n in range(WARM_ADDRESSES)])
        cases = [
            Case(FLOOR, "/v1/_floor", lambda n: (key, f"p{n}@{warm_domain(n)}")),
            Case(DOMAIN_CACHED, "/v1/verify", lambda n: (key, f"new{n}-{tag}@{warm_domain(n)}")),
            Case("verify, one key, verdict cached", "/v1/verify", lambda n: (key, warm_address(n))),
            Case(
                f"verify, {ACCOUNTS} accounts, domain cached",
                "/v1/verify",
                lambda n: (keys[n % ACCOUNTS], f"many{n}-{tag}@{warm_domain(n)}"),
            ),
            Case("verify, one key, uncached domains", "/v1/verify", lambda n: (key, f"p{n}@u{n}-{tag}.com")),
        ]
        results = [_measure(stack, case, requests_per_case) for case in cases if not only or case.name in only]
        web = stack.web_memory()
        seen = inspect(stack) if inspect is not None else {}
        for result in results:
            result.memory_mib = {"web largest": web.largest, "web sum": web.total}
            result.extra |= {"backend": backend, **seen}
        return results


def _warm(port: int, requests: list[tuple[str, str]]) -> None:
    plan = [["/v1/verify", key, json.dumps({"email": email})] for key, email in requests]
    result = _loadgen(port, plan, threads=4)
    if set(result["statuses"]) != {"200"}:
        raise RuntimeError(f"warm-up requests failed: {result['statuses']}")


def _measure(stack: Stack, case: Case, count: int) -> Measurement:
    plans: list[list[list[str]]] = [[] for _ in range(LOADGEN_PROCESSES)]
    for n in range(count):
        key, email = case.request(n)
        plans[n % LOADGEN_PROCESSES].append([case.path, key, json.dumps({"email": email})])
    start_at = time.time() + 1.0
    outputs = parallel_loadgens(stack.port, plans, start_at)
    latencies, statuses, seconds, failed = tally(outputs)
    server_ms = [x for out in outputs for x in out["server_ms"]]
    return Measurement(
        scenario="single",
        case=case.name,
        unit="req/s",
        rate=len(latencies) / seconds,
        count=len(latencies),
        seconds=seconds,
        p50_ms=percentile(latencies, 50),
        p95_ms=percentile(latencies, 95),
        p99_ms=percentile(latencies, 99),
        extra={
            "concurrency": LOADGEN_PROCESSES * THREADS_PER_PROCESS,
            "statuses": statuses,
            "server_response_time_ms_median": statistics.median(server_ms) if server_ms else None,
        },
        errors=[f"{failed} of {len(latencies)} requests did not answer 200: {statuses}"] if failed else [],
    )


def tally(outputs: list[dict[str, Any]]) -> tuple[list[float], dict[str, int], float, int]:
    """The load generators' outputs together: latencies (ms), count by HTTP status, the seconds from
    the first start to the last end, and how many requests did not answer 200."""
    latencies = [x for out in outputs for x in out["latencies_ms"]]
    statuses: dict[str, int] = {}
    for out in outputs:
        for status, n in out["statuses"].items():
            statuses[status] = statuses.get(status, 0) + n
    seconds = max(out["ended"] for out in outputs) - min(out["began"] for out in outputs)
    failed = sum(n for status, n in statuses.items() if status != "200")
    return latencies, statuses, seconds, failed


def parallel_loadgens(
    port: int,
    plans: list[list[list[str]]],
    start_at: float,
    *,
    threads: int = THREADS_PER_PROCESS,
    seconds: float | None = None,
) -> list[dict[str, Any]]:
    """One load generator process per plan, all starting at `start_at`; with `seconds`, each goes on
    that long (round its list again if need be) rather than once through it."""
    processes = [_spawn() for _ in plans]
    try:
        for process, plan in zip(processes, plans, strict=True):
            assert process.stdin is not None
            duration = {"seconds": seconds} if seconds else {}
            process.stdin.write(json.dumps(_plan(port, plan, threads, start_at) | duration).encode())
            process.stdin.close()
            process.stdin = None  # so communicate() does not flush it again
        return [_collect(process) for process in processes]
    finally:
        for process in processes:
            stop_group(process, grace=2)


def _loadgen(port: int, requests: list[list[str]], threads: int) -> dict[str, Any]:
    process = _spawn()
    try:
        assert process.stdin is not None
        process.stdin.write(json.dumps(_plan(port, requests, threads, time.time())).encode())
        process.stdin.close()
        process.stdin = None
        return _collect(process)
    finally:
        stop_group(process, grace=2)


def _spawn() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [PY, "-m", "bench.loadgen"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
    )


def _plan(port: int, requests: list[list[str]], threads: int, start_at: float) -> dict[str, Any]:
    return {"port": port, "threads": threads, "start_at": start_at, "requests": requests}


def _collect(process: subprocess.Popen[bytes], timeout: float = 600) -> dict[str, Any]:
    assert process.stdout is not None
    out, _ = process.communicate(timeout=timeout)
    if process.returncode != 0:
        raise RuntimeError(f"load generator exited with {process.returncode}")
    return dict(json.loads(out))
