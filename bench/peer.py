"""Scenario ``peer``: the same rows through ``email-validator`` (what a Python user would write instead).

``validate_email(address, check_deliverability=True, dns_resolver=caching_resolver(timeout=3))``,
the resolver pointed at the loopback DNS process. One address after another, as such code
runs; an address it refuses (``EmailNotValidError``) counts as processed.
"""

from __future__ import annotations

import os
import sys
import time

import email_validator

from bench.data import Dataset
from bench.procs import current_rss_mib, peak_rss_mib, reset_peak_rss
from bench.results import Measurement

PROGRESS_EVERY = 10_000


def run(data: Dataset, dns_host: str, dns_port: int, limit: int | None = None) -> Measurement:
    resolver = email_validator.caching_resolver(timeout=3)
    resolver.port = dns_port  # before nameservers: dnspython applies the port as they are set
    resolver.nameservers = [dns_host]
    rows = data.rows[:limit] if limit else data.rows
    pid = os.getpid()
    reset = reset_peak_rss()
    before = current_rss_mib(pid)
    refused = 0
    started = time.perf_counter()
    for n, address in enumerate(rows, 1):
        try:
            email_validator.validate_email(address, check_deliverability=True, dns_resolver=resolver)
        except email_validator.EmailNotValidError:
            refused += 1
        if n % PROGRESS_EVERY == 0:
            rate = n / (time.perf_counter() - started)
            print(f"  peer: {n:,}/{len(rows):,} rows, {rate:,.0f} rows/s", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    return Measurement(
        scenario="peer",
        case="email-validator, deliverability, caching resolver",
        unit="rows/s",
        rate=len(rows) / seconds,
        count=len(rows),
        seconds=seconds,
        memory_mib={"bench process (increase)": max(0.0, peak_rss_mib(pid) - before)},
        extra={"refused": refused},
        errors=[] if reset else ["could not reset VmHWM: the memory figure is the process's lifetime peak"],
    )
