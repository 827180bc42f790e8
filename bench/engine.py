"""Scenario ``engine``: the verification engine in-process, the floor the service is measured against.

Rows in chunks of 2,000 (as the bulk worker takes them) through ``verify_many`` with
``lookup_domains``, the engine's batch resolver pointed at the loopback DNS process and an
in-memory dict as the domain cache. No database, no HTTP.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from functools import partial

from bench.data import Dataset
from bench.procs import current_rss_mib, peak_rss_mib, reset_peak_rss
from bench.results import Measurement
from lib.garbage import lifelong_frozen
from tests.support.domain_cache import DictCache
from verification.engine import (
    BatchResolver,
    ResolverConfig,
    lookup_domains,
    verify_many,
)
from verification.engine.verdict import rules_forget, rules_load

CHUNK = 2000


def as_a_fresh_worker() -> None:
    """Each round starts as a bulk job's workers do (bench/README.md, "What is measured"): the rules'
    lists read (a worker reads them as it starts), no per-domain memo left from an earlier round
    (each round's job runs in new worker processes), and what is alive now put out of the garbage
    collector's walks, as a worker does once it has read the lists (jobs/apps.py)."""
    rules_load()
    rules_forget()
    lifelong_frozen()


def run(data: Dataset, dns_address: str) -> Measurement:
    config = ResolverConfig(nameservers=(dns_address,), timeout=3, lifetime=3, concurrency=256)
    lookup = partial(lookup_domains, cache=DictCache(), resolver=BatchResolver(config))
    pid = os.getpid()
    as_a_fresh_worker()
    reset = reset_peak_rss()
    before = current_rss_mib(pid)
    statuses: Counter[str] = Counter()
    started = time.perf_counter()
    for offset in range(0, len(data.rows), CHUNK):
        statuses.update(verdict.status for verdict in verify_many(data.rows[offset : offset + CHUNK], lookup))
    seconds = time.perf_counter() - started
    counts = {str(status): count for status, count in statuses.items()}
    rows = len(data.rows)
    errors = [] if reset else ["could not reset VmHWM: the memory figure is the process's lifetime peak"]
    if counts.get("unknown"):
        errors.append(f"{counts['unknown']} rows came back 'unknown' (DNS failures): the DNS server is overloaded")
    return Measurement(
        scenario="engine",
        case="in-process, dict domain cache",
        unit="rows/s",
        rate=rows / seconds,
        count=rows,
        seconds=seconds,
        memory_mib={"bench process (increase)": max(0.0, peak_rss_mib(pid) - before)},
        extra={"verdicts": counts},
        errors=errors,
    )
