"""Scenarios ``fairness`` and ``isolation``: many customers at once (docs/bulk.md, "Many customers at once").

fairness: SQLite, one qcluster, the loopback DNS at 2 ms. Five accounts each upload a list of
``rows`` rows at once (each list its own shuffle, as different customers' lists would be);
0.5 s after the last is accepted, a sixth account uploads 50 rows. Measured: the 50-row job
from its upload to its signed callback (target: within 2 s), and the five big jobs' aggregate
throughput, all their rows over the time from the first upload to the last callback.

isolation: the same stack with ``bench.settings``; single ``POST /v1/verify`` (domain cached, 8
concurrent clients, as in ``single``) idle, then again while two ``rows``-row jobs run one after
the other (a busy window longer than the measurement). Target: p99 during the jobs at most 2x
the idle p99.
"""

from __future__ import annotations

import json
import threading
import time

from bench import bulk, single
from bench.data import default_domains, generate
from bench.receiver import Receiver
from bench.results import Measurement
from bench.stack import Account, Stack

BIG_JOBS = 5
SMALL_ROWS = 50
SMALL_DELAY = 0.5
FAIRNESS_SMALL = "a 50-row job behind five big ones: upload → callback"
FAIRNESS_BIG = "five big jobs side by side: aggregate"
ISOLATION_IDLE = "verify p99, idle"
ISOLATION_BUSY = "verify p99, during a bulk job"


def run_fairness(dns_address: str, rows: int) -> list[Measurement]:
    lists = [generate(rows, default_domains(rows), seed=seed).csv_bytes() for seed in range(BIG_JOBS)]
    small_list = "".join(f"small{i}@fair-share.example\n" for i in range(SMALL_ROWS)).encode()
    with Stack("sqlite", dns_address) as stack, Receiver() as receiver:
        bigs = [stack.create_account(f"big{i}@bench.example", credits=rows + 1000) for i in range(BIG_JOBS)]
        small = stack.create_account("small@bench.example", credits=1000)
        stack.start_web(workers=2)
        stack.start_qcluster()
        time.sleep(bulk.WORKER_BOOT_SECONDS)
        started = time.monotonic()
        big_ids = _upload_all(stack, receiver, list(zip(bigs, lists, strict=True)))
        time.sleep(SMALL_DELAY)
        small_started = time.monotonic()
        small_id = bulk.upload(stack, small.api_key, small_list, callback_url=receiver.url)
        small_callback = bulk._wait(stack, small, receiver, small_id)
        last = max(
            bulk._wait(stack, account, receiver, job).arrived for account, job in zip(bigs, big_ids, strict=True)
        )
    small_seconds = small_callback.arrived - small_started
    total = rows * BIG_JOBS
    return [
        Measurement("fairness", FAIRNESS_SMALL, "s", small_seconds, SMALL_ROWS, small_seconds),
        Measurement("fairness", FAIRNESS_BIG, "rows/s", total / (last - started), total, last - started),
    ]


def _upload_all(stack: Stack, receiver: Receiver, work: list[tuple[Account, bytes]]) -> list[str]:
    ids: dict[int, str] = {}
    threads = [
        threading.Thread(
            target=lambda i=i, a=a, c=c: ids.__setitem__(i, bulk.upload(stack, a.api_key, c, callback_url=receiver.url))
        )
        for i, (a, c) in enumerate(work)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [ids[i] for i in range(len(work))]


def run_isolation(dns_address: str, rows: int, requests_per_case: int) -> list[Measurement]:
    with Stack("sqlite", dns_address, settings_module="bench.settings") as stack:
        keys: list[str] = json.loads(stack.shell(single.OPEN_ACCOUNTS % 1).strip().splitlines()[-1])
        # Two lists, one after the other: a busy window longer than the measurement.
        bulk_accounts = [stack.create_account(f"isolation{i}@bench.example", credits=rows + 1000) for i in range(2)]
        stack.start_web(workers=2)
        stack.start_qcluster()
        time.sleep(bulk.WORKER_BOOT_SECONDS)
        case = single.Case(ISOLATION_IDLE, "/v1/verify", lambda n: (keys[0], f"i{n}@warm{n % 20}.isolation.example"))
        single._warm(stack.port, [case.request(n) for n in range(200)])
        idle = single._measure(stack, case, requests_per_case)
        content = generate(rows, default_domains(rows), seed=7).csv_bytes()
        job_ids = [_start_job(stack, account, content) for account in bulk_accounts]
        busy_case = single.Case(ISOLATION_BUSY, case.path, lambda n: (keys[0], f"b{n}@warm{n % 20}.isolation.example"))
        busy = single._measure(stack, busy_case, requests_per_case)
        last = bulk._job(stack, bulk_accounts[-1], job_ids[-1])
    for measurement in (idle, busy):
        measurement.scenario = "isolation"
    if last["status"] != "processing":
        busy.errors.append(f"the jobs were {last['status']} by the end of the measurement: they did not overlap fully")
    busy.extra["last_job_progress_at_end"] = last["progress"]
    return [idle, busy]


def _start_job(stack: Stack, account: Account, content: bytes) -> str:
    job_id = bulk.upload(stack, account.api_key, content)
    deadline = time.monotonic() + 30
    while bulk._job(stack, account, job_id)["status"] == "pending":
        if time.monotonic() > deadline:
            raise bulk.BenchAbort("the bulk job did not start within 30 s")
        time.sleep(0.05)
    return job_id
