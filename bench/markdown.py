"""The README's "Performance" table from a run's JSON: every row the median of its rounds, with min and max.

python -m bench.markdown [var/bench/latest.json]
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parent.parent / "var" / "bench" / "latest.json"


def table(run: dict[str, Any]) -> str:
    rows: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for measured in run["measurements"]:
        backend = measured["extra"].get("backend") or ""
        rows[(measured["scenario"], measured["case"], backend)].append(measured)
    lines = [
        "| scenario | case | rate: median (min–max) | p50 / p99 ms (median) | seconds (median) | rounds |",
        "|---|---|---|---|---|---|",
    ]
    for (scenario, case, backend), found in rows.items():
        label = (
            f"{case} ({'PostgreSQL + Redis' if backend == 'postgres' else 'SQLite'})" if scenario == "single" else case
        )
        rates = [m["rate"] for m in found]
        latency = ""
        if found[0]["p50_ms"] is not None:
            latency = f"{_median(found, 'p50_ms'):.1f} / {_median(found, 'p99_ms'):.1f}"
        spread = f"{_number(statistics.median(rates))} ({_number(min(rates))}–{_number(max(rates))}) {found[0]['unit']}"
        lines.append(
            f"| {scenario} | {label} | {spread} | {latency} | {_median(found, 'seconds'):.1f} | {len(found)} |"
        )
    return "\n".join(lines)


def _median(found: list[dict[str, Any]], key: str) -> float:
    return statistics.median(m[key] for m in found)


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    run = json.loads(path.read_text())
    print(table(run))
    print()
    for target in run["targets"]:
        verdict = {True: "met", False: "MISSED", None: "n/a"}[target["met"]]
        print(f"- {verdict}: {target['name']}: {target['measured']}")


if __name__ == "__main__":
    main()
