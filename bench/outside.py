"""Scenario ``outside``: what a customer sees, on the README's default stack started cold.

Every case starts a stack of its own in `make run`'s shape: `manage.py runserver` (its
autoreloader on, DEBUG on, as `make run` serves) and one `manage.py qcluster`, SQLite with the
django-q2 ORM broker, the default settings; only what an operator sets for deep mode
(docs/deep.md) and the loopback DNS server are added. Nothing has run on it before the clock
(the web has answered one `GET /healthz`, as a customer's browser would have). The clock runs from
the upload's first byte to the completion a client sees polling `GET /v1/jobs/{id}` every 0.1 s.

- deep: the `deep` scenario's 2,000 rows (400 domains on 100 MX addresses, every reply 50 ms late,
  bench/mxfarm.py), then on another fresh stack its 20,000 rows (4,000 domains, same addresses);
  the farm counts the sessions and the most one address had at once (never more than 3).
- fairness: five accounts upload the `fairness` scenario's 100,000-row lists at once; 0.5 s after
  the last is accepted, a sixth uploads 50 rows: its upload → signed callback.
- bulk: the bench's generated list (bench/data.py, 100,000 rows by default) as one fast job against
  the loopback DNS server the run started (2 ms answers), upload → completion polled; then, with
  the stack stopped, email-validator with a caching resolver on the same rows and the same DNS
  server (bench/peer.py; `--peer-rows` caps its rows), so the ratio is of one run.

Each deep and bulk job's time is split by the job's own timestamps (wall clock, to the microsecond in the
database): the upload's POST, queued (created → its first chunk claimed), running (claimed →
completed) and seen (completed → the poll that saw it); each job's also by the CPU seconds its
qcluster used meanwhile.
"""

from __future__ import annotations

import dataclasses
import functools
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any

from bench import bulk, deep, peer
from bench.data import Dataset, default_domains, generate
from bench.dnsd import DnsProcess
from bench.fairness import BIG_JOBS, SMALL_DELAY, SMALL_ROWS
from bench.mxfarm import farm_started
from bench.procs import command_line, cpu_seconds, group_members
from bench.receiver import Receiver
from bench.results import Measurement
from bench.stack import Account, Stack

POLL_SECONDS = 0.1
# What `make run` exports for its two processes (Makefile).
MAKE_RUN = {"DEBUG": "1", "Q_LOG_LEVEL": "WARNING"}
FAIR_ROWS = 100_000
OUTSIDE_DEEP = "deep, 2,000 rows, 100 MX addresses, 50 ms replies: upload → completion polled"
OUTSIDE_DEEP_LARGE = "deep, 20,000 rows, same 100 MX addresses: upload → completion polled"
OUTSIDE_FAIR = "a 50-row fast job behind five 100,000-row jobs: upload → callback"
OUTSIDE_BULK = "the bench's list as one fast job: upload → completion polled"
OUTSIDE_PEER = "email-validator, caching resolver, the same rows and DNS server"
PARTS = ("deep", "fairness", "bulk")


def run(
    dns: DnsProcess, data: Dataset, parts: tuple[str, ...] = PARTS, peer_rows: int | None = None
) -> list[Measurement]:
    measured = []
    if "deep" in parts:
        measured.extend(_deep_cases())
    if "fairness" in parts:
        measured.append(_fairness(dns.address))
    if "bulk" in parts:
        measured.extend(_bulk(data, dns, peer_rows))
    return measured


def _deep_cases() -> list[Measurement]:
    options = ("--addresses", deep.ADDRESSES, "--domains", deep.LARGE_DOMAINS, "--delay-ms", deep.DELAY_MS)
    with farm_started(*options) as farm:
        cases = ((OUTSIDE_DEEP, deep.rows()), (OUTSIDE_DEEP_LARGE, deep.rows(deep.LARGE_ROWS, deep.LARGE_DOMAINS)))
        return [_deep_job(farm.dns, farm.smtp_port, farm.process, case, content) for case, content in cases]


def _deep_job(dns_address: str, smtp_port: int, farm: subprocess.Popen[str], case: str, content: bytes) -> Measurement:
    count = content.count(b"\n") - 1
    with Stack("sqlite", dns_address, extra_env={**deep._env(smtp_port), **MAKE_RUN}) as stack:
        account = stack.create_account("deep@outside.example", credits=count + 1000)
        _start(stack)
        deep._farm_counts(farm)  # reset
        seen, phases = _job(stack, account, content, "deep")
        counts = deep._farm_counts(farm)
    errors = [] if counts["peak_per_address"] <= 3 else [f"{counts['peak_per_address']} connections to one address"]
    if seen.job["progress"]["processed"] != count or seen.job["status"] != "completed":
        errors.append(f"job {seen.job['status']}, progress {seen.job['progress']}")
    extra = {
        "sessions": counts["sessions"],
        "rcpts": counts["rcpt"],
        "peak_per_address": counts["peak_per_address"],
        **phases,
    }
    return Measurement("outside", case, "rows/s", count / seen.seconds, count, seen.seconds, extra=extra, errors=errors)


def _bulk(data: Dataset, dns: DnsProcess, peer_rows: int | None) -> list[Measurement]:
    """Our job on a fresh stack, then the peer on the same rows with the stack stopped (one machine, one run)."""
    rows = len(data.rows)
    with Stack("sqlite", dns.address, extra_env=MAKE_RUN) as stack:
        account = stack.create_account("bulk@outside.example", credits=rows + 1000)
        _start(stack)
        seen, phases = _job(stack, account, data.csv_bytes(), "fast")
    errors = []
    if seen.job["status"] != "completed" or seen.job["progress"]["processed"] != data.unique:
        errors.append(f"job {seen.job['status']}, progress {seen.job['progress']}, expected {data.unique} processed")
    ours = Measurement("outside", OUTSIDE_BULK, "rows/s", rows / seen.seconds, rows, seen.seconds, extra=phases,
                       errors=errors)  # fmt: skip
    theirs = peer.run(data, dns.host, dns.port, peer_rows)
    return [ours, dataclasses.replace(theirs, scenario="outside", case=OUTSIDE_PEER)]


def _job(stack: Stack, account: Account, content: bytes, mode: str) -> tuple[Seen, dict[str, float]]:
    """The job uploaded and polled until seen completed; its time split by its own timestamps, and
    the CPU seconds the qcluster used meanwhile."""
    idle = _qcluster_cpu(stack)
    seen = _upload_and_poll(stack, account, content, mode)
    cpu = _qcluster_cpu(stack) - idle
    return seen, _phases(stack, seen) | {"qcluster_cpu_s": round(cpu, 2)}


def _qcluster_cpu(stack: Stack) -> float:
    """The CPU seconds the qcluster's processes have used so far: on a shared machine a steadier
    figure of the worker's cost than the wall clock."""
    assert stack.web is not None
    return cpu_seconds([pid for pid in group_members(stack.web.pid) if "qcluster" in command_line(pid)])


def _start(stack: Stack) -> None:
    """`make run`'s two processes in one session, then the first answer of the web (bench/bulk.py `booted`)."""
    stack.start_make_run()
    bulk.booted(stack)


@dataclass(frozen=True)
class Seen:
    """A job seen from outside: the wall clock at the upload's first byte, the upload's seconds, and
    the seconds until a poll saw it finished, with that poll's job object."""

    job_id: str
    wall_start: float
    upload: float
    seconds: float
    job: dict[str, Any]


def _upload_and_poll(stack: Stack, account: Account, content: bytes, mode: str) -> Seen:
    wall_start, started = time.time(), time.monotonic()
    job_id = bulk.upload(stack, account.api_key, content, mode=mode)
    uploaded = time.monotonic()
    deadline = started + bulk.JOB_TIMEOUT
    while (job := bulk._job(stack, account, job_id))["status"] not in ("completed", "failed"):
        if time.monotonic() > deadline:
            raise bulk.BenchAbort(f"job {job_id} not finished within {bulk.JOB_TIMEOUT:.0f} s: {job}")
        time.sleep(POLL_SECONDS)
    return Seen(job_id, wall_start, uploaded - started, time.monotonic() - started, job)


def _phases(stack: Stack, seen: Seen) -> dict[str, float]:
    """Where the time went, by the job's own timestamps (the API's are whole seconds)."""
    code = (
        f"from jobs.models import Job; j = Job.objects.get(pk={seen.job_id!r}); "
        "print(j.created_at.timestamp(), j.started_at.timestamp(), j.completed_at.timestamp())"
    )
    created, claimed, completed = map(float, stack.shell(code).strip().splitlines()[-1].split())
    return {
        "upload_s": round(seen.upload, 3),
        "queued_s": round(claimed - created, 3),
        "running_s": round(completed - claimed, 3),
        "seen_s": round(seen.wall_start + seen.seconds - completed, 3),
    }


@functools.cache
def _big_lists() -> tuple[bytes, ...]:
    """The `fairness` scenario's lists at 100,000 rows, made once per bench run."""
    return tuple(generate(FAIR_ROWS, default_domains(FAIR_ROWS), seed=seed).csv_bytes() for seed in range(BIG_JOBS))


def _fairness(dns_address: str) -> Measurement:
    small_list = "".join(f"small{i}@fair-share.example\n" for i in range(SMALL_ROWS)).encode()
    with Stack("sqlite", dns_address, extra_env=MAKE_RUN) as stack, Receiver() as receiver:
        bigs = [stack.create_account(f"big{i}@outside.example", credits=FAIR_ROWS + 1000) for i in range(BIG_JOBS)]
        small = stack.create_account("small@outside.example", credits=1000)
        receiver.secret = small.signing_secret
        _start(stack)
        accepted: list[str] = []
        uploads = [
            threading.Thread(target=lambda a=account, c=content: accepted.append(bulk.upload(stack, a.api_key, c)))
            for account, content in zip(bigs, _big_lists(), strict=True)
        ]
        for upload in uploads:
            upload.start()
        for upload in uploads:
            upload.join()
        if len(accepted) != BIG_JOBS:
            raise bulk.BenchAbort(f"{BIG_JOBS - len(accepted)} of the big uploads were refused")
        time.sleep(SMALL_DELAY)
        started = time.monotonic()
        small_id = bulk.upload(stack, small.api_key, small_list, callback_url=receiver.url)
        callback = bulk._wait(stack, small, receiver, small_id)
    seconds = callback.arrived - started
    errors = [] if callback.signature_ok else ["callback signature did NOT verify"]
    return Measurement("outside", OUTSIDE_FAIR, "s", seconds, SMALL_ROWS, seconds, errors=errors)
