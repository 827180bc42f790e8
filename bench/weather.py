"""Scenario ``weather``: good domains against a resolver that loses packets or caps its rate.

A bulk chunk's path through the engine (``verify_many`` over ``with_second_chance``, chunks of
2,000, the production resolver defaults: timeout 3 s, lifetime 9 s, concurrency 256) on 10,000
rows over 5,000 good domains, against the loopback DNS server in a process of its own, once
dropping 2% of queries at random and once answering at most 1,000 a second. Reports the share
of rows that came back ``unknown`` (README, DNS: at most 0.1%) and the time taken.
"""

from __future__ import annotations

import time
from functools import partial

from bench.dnsd import start_dns
from bench.engine import CHUNK
from bench.procs import Processes
from bench.results import Measurement
from tests.support.domain_cache import DictCache
from verification.engine import BatchResolver, ResolverConfig, lookup_domains, verify_many
from verification.engine.core import with_second_chance

ROWS, DOMAINS = 10_000, 5_000
WEATHERS = {
    "2% packet loss": ("--loss", "0.02"),
    "1,000 answers/s cap": ("--max-qps", "1000"),
}


def rows() -> list[str]:
    return [f"person{i}@weather{i % DOMAINS}.example-weather.com" for i in range(ROWS)]


def run(processes: Processes, delay_ms: float) -> list[Measurement]:
    return [_one(processes, delay_ms, case, options) for case, options in WEATHERS.items()]


def _one(processes: Processes, delay_ms: float, case: str, options: tuple[str, ...]) -> Measurement:
    dns = start_dns(processes, delay_ms, *options)
    try:
        resolver = BatchResolver(ResolverConfig(nameservers=(dns.address,)))
        lookup = with_second_chance(partial(lookup_domains, cache=DictCache(), resolver=resolver))
        addresses = rows()
        started = time.perf_counter()
        unknown = sum(
            verdict.status == "unknown"
            for offset in range(0, ROWS, CHUNK)
            for verdict in verify_many(addresses[offset : offset + CHUNK], lookup)
        )
        seconds = time.perf_counter() - started
    finally:
        dns.process.terminate()
        dns.process.wait(timeout=10)
    share = unknown / ROWS
    return Measurement(
        scenario="weather",
        case=case,
        unit="rows/s",
        rate=ROWS / seconds,
        count=ROWS,
        seconds=seconds,
        extra={"unknown": unknown, "unknown_share": share, "domains": DOMAINS},
    )
