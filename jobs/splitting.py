"""How a job is cut into chunks at upload: their size and their rows in upload order. A large deep
job is cut later, by MX address, once its domains are resolved (jobs/grouping.py); a chunk's claim
and run are jobs/chunk_runs.py."""

from __future__ import annotations

from django.conf import settings

from jobs.models import Chunk, Job
from verification.engine.modes import ValidationMode

# A small list still runs in several chunks, so its progress moves rather than jumping from 0 to 100%.
SMALL_JOB_CHUNKS = 10


MIN_CHUNK_SIZE = 25


def chunk_size_for(total: int, *, mode: ValidationMode = ValidationMode.FAST) -> int:
    """BULK_CHUNK_SIZE, or smaller for a list of fewer than SMALL_JOB_CHUNKS chunks of it. A deep
    chunk is BULK_DEEP_CHUNK_SIZE rows (at most BULK_CHUNK_SIZE), never cut smaller for progress:
    its rows are grouped by MX address within it, so a small job split ten ways would open ten
    times the sessions it needs (docs/deep.md, "Bulk jobs")."""
    if mode == ValidationMode.DEEP:
        return min(settings.BULK_CHUNK_SIZE, settings.BULK_DEEP_CHUNK_SIZE)
    return min(settings.BULK_CHUNK_SIZE, max(MIN_CHUNK_SIZE, -(-total // SMALL_JOB_CHUNKS)))


def chunks_for(job: Job, size: int) -> list[Chunk]:
    return [
        Chunk(job=job, index=index, size=min(size, job.total - start))
        for index, start in enumerate(range(0, job.total, size))
    ]
