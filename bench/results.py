"""What a scenario reports: one ``Measurement`` per row of the results table."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Measurement:
    scenario: str  # engine, bulk, single, peer, scaling
    case: str  # e.g. "sqlite 1 worker", "verify one key domain-cached"
    unit: str  # "rows/s" or "req/s"
    rate: float
    count: int = 0  # rows or requests measured
    seconds: float = 0.0  # wall time they took
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    memory_mib: dict[str, float] = field(default_factory=dict)  # process label -> peak RSS
    extra: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]
