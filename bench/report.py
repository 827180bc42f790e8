"""The results table, the target checks as printed (each met / missed with its two figures), the
JSON file. The targets themselves are bench/targets.py's."""

from __future__ import annotations

import json
import os
import platform
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.results import Measurement
from bench.targets import Target


def table(results: list[Measurement]) -> str:
    header = ["round", "scenario", "case", "rate", "p50 ms", "p95 ms", "p99 ms", "seconds", "peak memory (MiB)"]
    rows = [header]
    for m in results:
        rows.append(
            [
                str(m.extra.get("round", "")),
                m.scenario,
                m.case,
                f"{m.rate:,.1f} {m.unit}" if m.unit in ("MB/s", "s", "% unknown") else f"{m.rate:,.0f} {m.unit}",
                _ms(m.p50_ms),
                _ms(m.p95_ms),
                _ms(m.p99_ms),
                f"{m.seconds:.1f}",
                _memory(m.memory_mib),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [" | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def _memory(memory: dict[str, float]) -> str:
    return ", ".join(f"{label} {value:.0f}" for label, value in memory.items())


def details(results: list[Measurement]) -> str:
    lines = []
    for m in results:
        if m.scenario in ("bulk", "bulk-wide", "scaling", "upload"):
            keys = ("file_mb", "upload_seconds", "end_to_end_seconds", "seconds_per_1k_rows", "result_rows")
            shown = {k: round(v, 3) if isinstance(v, float) else v for k, v in m.extra.items() if k in keys}
            lines.append(f"{m.scenario} / {m.case}: {shown}")
        elif m.scenario == "single":
            lines.append(
                f"single / {m.case}: server response_time_ms median {m.extra.get('server_response_time_ms_median')}, "
                f"statuses {m.extra.get('statuses')}"
            )
        for error in m.errors:
            lines.append(f"!!! {m.scenario} / {m.case}: {error}")
    return "\n".join(lines)


def checks(found: list[Target]) -> str:
    word = {True: "met   ", False: "MISSED", None: "n/a   "}
    return "\n".join(f"{word[t.met]}  {t.name}: {t.measured} vs {t.limit}" for t in found)


def write_json(
    path: Path, options: dict[str, Any], results: list[Measurement], found: list[Target], failures: list[str]
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "options": options,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "measurements": [m.to_dict() for m in results],
        "targets": [asdict(t) for t in found],
        "failures": failures,
    }
    path.write_text(json.dumps(document, indent=2, default=str) + "\n")
