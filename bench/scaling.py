"""Scenario ``scaling``: the SQLite ``bulk`` run at 10k, 50k and 100k rows (domains = rows / 5).

Reports seconds per 1,000 rows at each size; the target compares 100k with 10k.
"""

from __future__ import annotations

import sys

from bench import bulk
from bench.data import generate
from bench.results import Measurement

SIZES = (10_000, 50_000, 100_000)


def run(
    dns_address: str, sizes: tuple[int, ...] = SIZES, reuse: dict[int, Measurement] | None = None
) -> list[Measurement]:
    """``reuse``: SQLite bulk measurements already taken this run, by row count (not run twice)."""
    results = []
    for rows in sizes:
        previous = (reuse or {}).get(rows)
        if previous is None:
            print(f"  scaling: {rows:,} rows", file=sys.stderr, flush=True)
            (previous,) = bulk.run(generate(rows), dns_address, bulk.SQLITE, scenario="scaling")
        results.append(_as_scaling(previous))
    return results


def _as_scaling(measurement: Measurement) -> Measurement:
    return Measurement(
        scenario="scaling",
        case=f"SQLite bulk, {measurement.count:,} rows",
        unit="rows/s",
        rate=measurement.rate,
        count=measurement.count,
        seconds=measurement.seconds,
        memory_mib=dict(measurement.memory_mib),
        extra={"seconds_per_1k_rows": measurement.seconds / measurement.count * 1000},
        errors=list(measurement.errors),
    )
