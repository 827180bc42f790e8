"""Scenario ``probe``: the adversarial probe's load and money checks (2026-11-24), run again.

Production shape: PostgreSQL + Redis, gunicorn ``-w 4`` with ``config.settings`` (plan rates as
sold: nothing raised), one ``qcluster``; the loopback DNS process answers. Three checks:

- money: 50 parallel ``POST /v1/verify`` (50 new addresses, one key) on an account holding 10
  credits: exactly 10 answered ``200`` and charged, 40 ``402 insufficient_credits``, the balance 0
  and the ledger summing to it;
- crash: a 50,000-row job (``bench.data``'s mix); once a tenth of its rows are processed the
  qcluster's whole process group gets SIGKILL and a new one starts; the job completes, its
  ledger entries net one credit per unique address, and the result file holds each unique
  address exactly once. Chunk leases are 15 s here (production: 120 s), so the killed chunks
  come back within the run;
- load: 40 clients (one account and key each, the pro plan's 50 requests a second) for 60 s of
  back-to-back ``POST /v1/verify`` on new addresses over 200 domains: requests, errors (any
  answer but 200: must be 0), client p50 and p99.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
import uuid
from typing import Any

import requests

from bench.bulk import BenchAbort, _auth, _job, _result_emails
from bench.data import generate
from bench.results import Measurement, percentile
from bench.single import parallel_loadgens, tally
from bench.stack import Account, Stack

MONEY = "money: 50 parallel verifies on 10 credits"
CRASH = "crash: kill -9 of the qcluster mid a 50,000-row job"
LOAD = "load: 40 clients for 60 s"
CRASH_ROWS = 50_000
LOAD_CLIENTS, LOAD_SECONDS, LOADGEN_PROCESSES = 40, 60.0, 2
JOB_TIMEOUT = 900.0

OPEN_ACCOUNTS = """
import json
from accounts.services import account_open
from billing.services import credits_grant
opened = [account_open(email=f"probe{i}-%s@bench.example", password="bench-password-1", plan_code="pro",
                       issue_key=True) for i in range(%d)]
for one in opened:
    credits_grant(account=one.account, amount=10**6)
print(json.dumps([one.api_key for one in opened]))
"""
LEDGER = """
import json
from django.db.models import Sum
from accounts.models import Account
account = Account.objects.get(public_id="%s")
entries = account.ledger_entries
job = entries.filter(reference__startswith="%s")
print(json.dumps({"balance": account.credit_balance, "ledger": entries.aggregate(s=Sum("amount"))["s"],
                  "job_net": job.aggregate(s=Sum("amount"))["s"] or 0,
                  "spends": entries.filter(kind="spend").count()}))
"""


def run(dns_address: str) -> list[Measurement]:
    with Stack("postgres", dns_address, extra_env={"BULK_CHUNK_LEASE_SECONDS": "15"}) as stack:
        stack.start_web(workers=4)
        stack.start_qcluster()
        return [_money(stack), _crash(stack), _load(stack)]


def _ledger(stack: Stack, account_id: str, reference: str = "-") -> dict[str, int]:
    found: dict[str, int] = json.loads(stack.shell(LEDGER % (account_id, reference)).strip().splitlines()[-1])
    return found


def _money(stack: Stack) -> Measurement:
    account = stack.create_account("money@bench.example", credits=10, plan="enterprise")  # 200 requests/s
    gate = threading.Barrier(50)
    answers: list[tuple[int, str]] = []

    def one(n: int) -> None:
        gate.wait()
        response = requests.post(
            f"{stack.base_url}/v1/verify", json={"email": f"m{n}@co{n}.com"}, headers=_auth(account), timeout=60
        )
        code = response.json().get("error", {}).get("code", "") if response.status_code != 200 else ""
        answers.append((response.status_code, code))

    started = time.monotonic()
    threads = [threading.Thread(target=one, args=(n,)) for n in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - started
    ok = sum(1 for status, _ in answers if status == 200)
    refused = sum(1 for answer in answers if answer == (402, "insufficient_credits"))
    ledger = _ledger(stack, account.account_id)
    errors = []
    if (ok, refused, len(answers)) != (10, 40, 50):
        errors.append(f"{ok} answered 200 and {refused} 402 insufficient_credits of {len(answers)}: {answers}")
    if (ledger["balance"], ledger["ledger"], ledger["spends"]) != (0, 0, 10):
        errors.append(f"balance and ledger do not add up: {ledger}")
    return Measurement("probe", MONEY, "req/s", 50 / seconds, 50, seconds, extra={"ledger": ledger, "ok": ok,
                       "refused": refused}, errors=errors)  # fmt: skip


def _crash(stack: Stack) -> Measurement:
    data = generate(CRASH_ROWS)
    account = stack.create_account("crash@bench.example", credits=CRASH_ROWS + 1000)
    started = time.monotonic()
    response = requests.post(
        f"{stack.base_url}/v1/verify/bulk",
        files={"file": ("crash.csv", data.csv_bytes(), "text/csv")},
        headers=_auth(account),
        timeout=120,
    )
    if response.status_code != 202:
        raise BenchAbort(f"upload refused: {response.status_code} {response.text[:300]}")
    job_id = response.json()["id"]
    killed_at = _kill_qcluster_mid_job(stack, account, job_id, data.unique // 10)
    stack.start_qcluster()
    job = _until_finished(stack, account, job_id)
    seconds = time.monotonic() - started
    emails = _result_emails(stack, account, job_id) or []
    ledger = _ledger(stack, account.account_id, job_id)
    errors = []
    if job["status"] != "completed" or job["progress"]["processed"] != data.unique:
        errors.append(f"job ended {job['status']} with {job['progress']} (expected {data.unique} processed)")
    if ledger["job_net"] != -data.unique or ledger["balance"] != ledger["ledger"]:
        errors.append(f"the job's ledger nets {ledger['job_net']} for {data.unique} rows; {ledger}")
    if len(emails) != data.unique or len(set(emails)) != data.unique:
        errors.append(f"result file: {len(emails)} rows, {len(set(emails))} distinct, expected {data.unique}")
    return Measurement("probe", CRASH, "rows/s", CRASH_ROWS / seconds, CRASH_ROWS, seconds, extra={
        "killed_at_processed": killed_at, "unique": data.unique, "job_net": ledger["job_net"],
        "result_rows": len(emails)}, errors=errors)  # fmt: skip


def _kill_qcluster_mid_job(stack: Stack, account: Account, job_id: str, processed: int) -> int:
    deadline = time.monotonic() + JOB_TIMEOUT
    while time.monotonic() < deadline:
        job = _job(stack, account, job_id)
        if job["status"] in ("completed", "failed"):
            raise BenchAbort(f"job {job_id} ended before the kill: {job['status']}")
        if job["progress"]["processed"] >= processed:
            worker = stack.workers.pop()
            with contextlib.suppress(ProcessLookupError):  # the whole cluster at once, as a power cut would
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=10)
            return int(job["progress"]["processed"])
        time.sleep(0.2)
    raise BenchAbort(f"job {job_id} never reached {processed} processed rows")


def _until_finished(stack: Stack, account: Account, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + JOB_TIMEOUT
    while time.monotonic() < deadline:
        job = _job(stack, account, job_id)
        if job["status"] in ("completed", "failed"):
            return job
        time.sleep(1.0)
    raise BenchAbort(f"job {job_id} did not finish within {JOB_TIMEOUT:.0f} s after the restart")


def _load(stack: Stack) -> Measurement:
    tag = uuid.uuid4().hex[:6]
    keys: list[str] = json.loads(stack.shell(OPEN_ACCOUNTS % (tag, LOAD_CLIENTS)).strip().splitlines()[-1])
    plan = [
        ["/v1/verify", keys[n % LOAD_CLIENTS], json.dumps({"email": f"l{n}-{tag}@co{n % 200}.com"})]
        for n in range(40_000)
    ]
    plans = [plan[index::LOADGEN_PROCESSES] for index in range(LOADGEN_PROCESSES)]
    threads = LOAD_CLIENTS // LOADGEN_PROCESSES
    outputs = parallel_loadgens(stack.port, plans, time.time() + 1.0, threads=threads, seconds=LOAD_SECONDS)
    latencies, statuses, seconds, failed = tally(outputs)
    errors = [f"{failed} of {len(latencies)} requests did not answer 200: {statuses}"] if failed else []
    measured = Measurement("probe", LOAD, "req/s", len(latencies) / seconds, len(latencies), seconds, errors=errors)
    measured.p50_ms, measured.p95_ms, measured.p99_ms = (percentile(latencies, q) for q in (50, 95, 99))
    measured.extra = {"statuses": statuses, "errors": failed, "clients": LOAD_CLIENTS}
    return measured
