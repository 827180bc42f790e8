"""Server-rendered bar charts: the geometry here, the SVG in the template. No JavaScript."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True, slots=True)
class Bar:
    day: date
    value: int
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True, slots=True)
class BarChart:
    bars: list[Bar]
    width: int
    height: int
    peak: int
    total: int


def bar_chart(points: Sequence[tuple[date, int]], *, width: int = 600, height: int = 160) -> BarChart:
    """Bars scaled so the busiest day fills the height; an empty day still gets a 1px stub."""
    peak = max((value for _, value in points), default=0)
    slot = width / max(len(points), 1)
    gap = min(2.0, slot / 4)
    bars = []
    for index, (day, value) in enumerate(points):
        bar_height = max(1.0, round(value / peak * height, 1)) if peak else 1.0
        bars.append(Bar(day, value, round(index * slot + gap / 2, 1), height - bar_height, slot - gap, bar_height))
    return BarChart(bars=bars, width=width, height=height, peak=peak, total=sum(v for _, v in points))
