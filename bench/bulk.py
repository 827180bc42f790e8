"""Scenario ``bulk``: the full service, HTTP upload to signed callback.

A fresh stack per run: gunicorn (2 workers) for the web, django-q2 ``qcluster`` process(es)
for the work, the loopback DNS process for DNS. SQLite with one qcluster, or PostgreSQL +
Redis with two. The generated CSV is uploaded with a ``callback_url`` on a loopback
receiver; the clock runs from the start of the upload to the callback's arrival. Then the
result file is downloaded and its rows counted.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from bench.data import Dataset, wide_csv
from bench.receiver import Receiver
from bench.results import Measurement
from bench.stack import Account, Stack

JOB_TIMEOUT = 600.0  # a job not done by then aborts the scenario
UPLOAD_LIMIT_BYTES = 25 * 1024 * 1024
WORKER_BOOT_SECONDS = 3.0
WIDE = "bulk-wide"  # the scenario name of the 6-column run


@dataclass(frozen=True)
class Setup:
    backend: str  # "sqlite" or "postgres"
    qclusters: int

    @property
    def label(self) -> str:
        return "SQLite, 1 qcluster" if self.backend == "sqlite" else "PostgreSQL + Redis, 2 qclusters"


SQLITE = Setup("sqlite", 1)
POSTGRES = Setup("postgres", 2)


class BenchAbort(RuntimeError):
    """A scenario could not finish (job failed or timed out)."""


def run(
    data: Dataset,
    dns_address: str,
    setup: Setup,
    *,
    scenario: str = "bulk",
    with_big_upload: bool = False,
    wide: bool = False,
    settings_module: str = "config.settings",
    inspect: Callable[[Stack], dict[str, object]] | None = None,
) -> list[Measurement]:
    """One job on a fresh stack of `settings_module`; `wide`: the same addresses in a 6-column file of
    just under 25 MiB; `inspect` reads the stack after the job, into the job's measurement's extra."""
    with Stack(setup.backend, dns_address, settings_module=settings_module) as stack, Receiver() as receiver:
        account = stack.create_account("bulk@bench.example", credits=len(data.rows) + 1000)
        receiver.secret = account.signing_secret
        stack.start_web(workers=2)
        for _ in range(setup.qclusters):
            stack.start_qcluster()
        booted(stack)  # the workers' start-up is not part of a job's throughput
        content = data.wide_csv_bytes(UPLOAD_LIMIT_BYTES) if wide else data.csv_bytes()
        measurement = _one_job(stack, account, receiver, data, setup, scenario, content)
        measurement.extra |= inspect(stack) if inspect is not None else {}
        results = [measurement]
        if with_big_upload:
            results.append(_big_upload(stack, setup))
        return results


def booted(stack: Stack) -> None:
    """Wait out the workers' start-up: WORKER_BOOT_SECONDS, then until the web answers. A web worker
    accepts no connection before it has imported the service, which on a loaded machine took
    longer than the fixed wait (bench/README.md, "Start-up"): the upload's clock ran meanwhile."""
    time.sleep(WORKER_BOOT_SECONDS)
    deadline = time.monotonic() + JOB_TIMEOUT
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{stack.base_url}/healthz", timeout=JOB_TIMEOUT).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.1)
    raise BenchAbort("the web did not answer /healthz")


def _one_job(
    stack: Stack, account: Account, receiver: Receiver, data: Dataset, setup: Setup, scenario: str, content: bytes
) -> Measurement:
    started = time.monotonic()
    response = requests.post(
        f"{stack.base_url}/v1/verify/bulk",
        files={"file": ("bench.csv", content, "text/csv")},
        data={"callback_url": receiver.url},
        headers=_auth(account),
        timeout=120,
    )
    uploaded = time.monotonic()
    if response.status_code != 202:
        raise BenchAbort(f"upload refused: {response.status_code} {response.text[:300]}")
    job_id = response.json()["id"]
    callback = _wait(stack, account, receiver, job_id)
    end_to_end = callback.arrived - started
    workers, web = stack.worker_memory(), stack.web_memory()
    errors = [] if callback.signature_ok else ["callback signature did NOT verify"]
    if callback.body.get("status") != "completed":
        errors.append(f"job ended {callback.body.get('status')}: {callback.body}")
    result_rows = _result_rows(stack, account, job_id)
    stored = _stored(stack, job_id)
    if result_rows != data.unique:
        errors.append(f"RESULT FILE HAS {result_rows} ROWS, EXPECTED {data.unique} (unique addresses)")
    rows = len(data.rows)
    return Measurement(
        scenario=scenario,
        case=f"{setup.label}, {rows:,} rows"
        + (f", 6 columns, {len(content) / 1e6:.1f} MB" if scenario == WIDE else ""),
        unit="rows/s",
        rate=rows / end_to_end,
        count=rows,
        seconds=end_to_end,
        memory_mib={
            "worker largest": workers.largest,
            "worker sum": workers.total,
            "web largest": web.largest,
            "web sum": web.total,
        },
        extra={
            "backend": setup.backend,
            "qclusters": setup.qclusters,
            "file_mb": len(content) / 1e6,
            "upload_seconds": uploaded - started,
            "end_to_end_seconds": end_to_end,
            "seconds_per_1k_rows": end_to_end / rows * 1000,
            "unique_rows": data.unique,
            "result_rows": result_rows,
            "callback": callback.body,
            **stored,
        },
        errors=errors,
    )


def _stored(stack: Stack, job_id: str, settle: float = 15.0) -> dict[str, Any]:
    """The job's files once the worker has tidied up (docs/api.md, "What is kept, and for how long"):
    what is kept, and any input or part file still there after `settle` seconds (there should be none)."""
    folder = stack.tmp / "media" / "jobs" / job_id
    deadline = time.monotonic() + settle
    while True:
        files = [path for path in folder.rglob("*") if path.is_file()]
        leftovers = [path for path in files if path.relative_to(folder).parts[0] in ("input", "parts")]
        if not leftovers or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    return {
        "stored_mb": sum(_size(path) for path in files) / 1e6,
        "stored_files": sorted(str(path.relative_to(folder)).split("-")[0] for path in files),
        "leftover_files": len(leftovers),
    }


def _size(path: Path) -> int:
    """0 for a file deleted since it was listed: on a loaded machine the worker may still be tidying up
    (the customer's-columns assembly deletes the parts) when `settle` runs out."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _wait(stack: Stack, account: Account, receiver: Receiver, job_id: str) -> Any:
    deadline = time.monotonic() + JOB_TIMEOUT
    while time.monotonic() < deadline:
        callback = receiver.wait_for(job_id, timeout=2.0)
        if callback is not None:
            return callback
        job = _job(stack, account, job_id)
        if job["status"] == "failed":
            raise BenchAbort(f"job {job_id} failed: {job}")
    job = _job(stack, account, job_id)
    raise BenchAbort(f"job {job_id} did not call back within {JOB_TIMEOUT:.0f} s; last seen: {job}")


def upload(stack: Stack, api_key: str, content: bytes, *, mode: str = "fast", callback_url: str = "") -> str:
    """A list as one job over the API (`POST /v1/verify/bulk`): its id; BenchAbort unless accepted."""
    data = {"validation_mode": mode} | ({"callback_url": callback_url} if callback_url else {})
    response = requests.post(
        f"{stack.base_url}/v1/verify/bulk",
        files={"file": ("list.csv", content, "text/csv")},
        data=data,
        headers={"Authorization": f"Bearer {api_key}"},
        timeout=120,
    )
    if response.status_code != 202:
        raise BenchAbort(f"upload refused: {response.status_code} {response.text[:300]}")
    return str(response.json()["id"])


def _job(stack: Stack, account: Account, job_id: str) -> dict[str, Any]:
    response = requests.get(f"{stack.base_url}/v1/jobs/{job_id}", headers=_auth(account), timeout=30)
    response.raise_for_status()
    return dict(response.json())


def _result_rows(stack: Stack, account: Account, job_id: str) -> int:
    emails = _result_emails(stack, account, job_id)
    return -1 if emails is None else len(emails)


def _result_emails(stack: Stack, account: Account, job_id: str) -> list[str] | None:
    """The result file's addresses, in its order; None when the job has no result file."""
    url = _job(stack, account, job_id).get("result_download_url")
    if not url:
        return None
    response = requests.get(url, timeout=120)
    response.raise_for_status()
    return [row[0] for row in list(csv.reader(io.StringIO(response.content.decode("utf-8"))))[1:]]


def _big_upload(stack: Stack, setup: Setup) -> Measurement:
    """The POST of a file just under the 25 MiB limit, timed alone (its job is left to the stack's shutdown)."""
    account = stack.create_account("big-upload@bench.example", credits=200_000)
    content = wide_csv(UPLOAD_LIMIT_BYTES)
    started = time.monotonic()
    response = requests.post(
        f"{stack.base_url}/v1/verify/bulk",
        files={"file": ("big.csv", content, "text/csv")},
        headers=_auth(account),
        timeout=120,
    )
    seconds = time.monotonic() - started
    errors = [] if response.status_code == 202 else [f"upload refused: {response.status_code} {response.text[:300]}"]
    return Measurement(
        scenario="upload",
        case=f"25 MiB file ({len(content) / 1e6:.1f} MB, {content.count(b'\n') - 1:,} rows), {setup.label}",
        unit="MB/s",
        rate=len(content) / 1e6 / seconds,
        count=1,
        seconds=seconds,
        extra={"bytes": len(content), "upload_seconds": seconds, "status": response.status_code},
        errors=errors,
    )


def _auth(account: Account) -> dict[str, str]:
    return {"Authorization": f"Bearer {account.api_key}"}
