"""The machine's figures, shared by /metrics and the staff dashboard: each a single indexed query."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Min
from django.utils import timezone

from jobs.models import Chunk


@dataclass(frozen=True)
class Queue:
    depth: int
    oldest_queued_at: datetime | None

    @property
    def oldest_age_seconds(self) -> float:
        return (timezone.now() - self.oldest_queued_at).total_seconds() if self.oldest_queued_at else 0.0


def queue() -> Queue:
    """Chunks waiting for a worker (a chunk is the unit the queue hands out) and the oldest one's wait."""
    row = Chunk.objects.filter(state=Chunk.State.PENDING).aggregate(depth=Count("id"), oldest=Min("queued_at"))
    return Queue(row["depth"], row["oldest"])
