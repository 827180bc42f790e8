"""Scenario ``deep-unknown``: the share of a deep job that ends ``unknown`` when MX hosts limit us.

    python -m bench --only deep-unknown

A fresh SQLite stack (gunicorn, one qcluster) with deep mode on, against bench/mxfarm.py: the
2,000 rows of the ``deep`` scenario (400 domains on 100 loopback MX addresses, replies 10 ms
late), where every third address allows a client RATE_LIMIT connections per RATE_WINDOW seconds
(Postfix's `smtpd_client_connection_rate_limit`, answering `421 4.7.0 … too many connections` at
the banner beyond it) and every fifth greylists each recipient for a second. Greylisted rows are
asked again after GREYLIST_RETRY_SECONDS (docs/deep.md, "Bulk jobs"). Reported: the share of the
job's rows that end `unknown`, by sub-status, the job's seconds, its sessions and the farm's
rate-limit refusals.
"""

from __future__ import annotations

import subprocess
import time

from bench import bulk
from bench.deep import _env, _farm_counts, _warm_up, rows
from bench.mxfarm import farm_started
from bench.receiver import Receiver
from bench.results import Measurement
from bench.stack import Stack

ROWS, ADDRESSES, DELAY_MS = 2000, 100, 10
RATE_LIMITED_EVERY, RATE_LIMIT, RATE_WINDOW = 3, 2, 20.0
GREYLIST_EVERY, GREYLIST_SECONDS, GREYLIST_RETRY_SECONDS = 5, 1.0, 2.0
CASE = "2,000 rows, a third of 100 MX addresses rate-limited (2 a 20 s), a fifth greylisting: unknown share"
UNKNOWN = ("greylisted", "smtp_unreachable", "smtp_blocked", "smtp_utf8_unsupported", "dns_temporary_failure")


def run() -> list[Measurement]:
    with farm_started(*_farm_options()) as farm:
        return [_measure(farm.dns, farm.smtp_port, farm.process)]


def _farm_options() -> list[object]:
    options = {
        "--addresses": ADDRESSES,
        "--domains": 400,
        "--delay-ms": DELAY_MS,
        "--rate-limited-every": RATE_LIMITED_EVERY,
        "--rate-limit": RATE_LIMIT,
        "--rate-window": RATE_WINDOW,
        "--greylist-every": GREYLIST_EVERY,
        "--greylist-seconds": GREYLIST_SECONDS,
    }
    return [part for pair in options.items() for part in pair]


def _measure(dns_address: str, smtp_port: int, farm: subprocess.Popen[str]) -> Measurement:
    env = {**_env(smtp_port), "VERIFIER_SMTP_GREYLIST_RETRY_SECONDS": str(GREYLIST_RETRY_SECONDS)}
    with Stack("sqlite", dns_address, extra_env=env) as stack, Receiver() as receiver:
        account = stack.create_account("unknown@bench.example", credits=ROWS + 1000)
        stack.start_web(workers=2)
        stack.start_qcluster()
        time.sleep(bulk.WORKER_BOOT_SECONDS)
        _warm_up(stack, account, receiver)
        _farm_counts(farm)  # reset
        started = time.monotonic()
        job_id = bulk.upload(stack, account.api_key, rows(ROWS), mode="deep", callback_url=receiver.url)
        seconds = bulk._wait(stack, account, receiver, job_id).arrived - started
        counts = _farm_counts(farm)
        job = bulk._job(stack, account, job_id)
    unknown = {name: job["breakdown"][name] for name in UNKNOWN if job["breakdown"][name]}
    share = sum(unknown.values()) / ROWS
    errors = [] if job["progress"]["processed"] == ROWS else [f"processed {job['progress']}"]
    extra = {
        "unknown_share": round(share, 4),
        "unknown": unknown,
        "sessions": counts["sessions"],
        "rate_refused": counts["rate_refused"],
    }
    return Measurement("deep-unknown", CASE, "% unknown", 100 * share, ROWS, seconds, extra=extra, errors=errors)
