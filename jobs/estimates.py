"""How long a job is estimated to take, from the recent jobs' throughput and the resolver's rate cap."""

from __future__ import annotations

import math
from collections.abc import Sequence

from django.conf import settings

from jobs.models import Job
from verification.engine.modes import ValidationMode
from verification.engine.syntax import parse
from verification.models import DomainRecord

# The throughput behind `estimated_seconds`: the most recently completed jobs, and among them
# those large enough that their time is rows, not the fixed cost of picking a job up.
RECENT_JOBS = 20


THROUGHPUT_MIN_ROWS = 1_000


def estimated_seconds(total: int, *, addresses: Sequence[str] = (), mode: ValidationMode = ValidationMode.FAST) -> int:
    """From the throughput of the most recently completed jobs of the same validation mode (rows
    per second), at least 1, and never less than a rate-capped resolver needs for the addresses'
    domains. A deep job waits on mail servers: a fast job's speed says nothing of it.

    Weighted by rows (all rows over all seconds), from the large ones only: a one-row job takes a
    second of queue pickup, which says nothing about a 50,000-row list (a fresh deployment's first
    large list was estimated at 1,366 s for 2 s of work). Until a large job has run, the default
    rate (BULK_DEFAULT_ROWS_PER_SECOND, or BULK_DEEP_DEFAULT_ROWS_PER_SECOND).
    """
    return max(_seconds_at_recent_rate(total, mode), _seconds_at_max_qps(addresses))


def _seconds_at_recent_rate(total: int, mode: ValidationMode) -> int:
    # Live jobs only: the sandbox's answers take no DNS, so its speed says nothing of a real list's.
    recent = (
        Job.objects.live()
        .filter(status=Job.Status.COMPLETED, processed__gt=0, started_at__isnull=False, completed_at__isnull=False)
        .filter(validation_mode=mode)
        .order_by("-completed_at")
    )
    timings = [
        (processed, max((completed - started).total_seconds(), 0.1))
        for processed, started, completed in recent.values_list("processed", "started_at", "completed_at")[:RECENT_JOBS]
        if started and completed  # never None here (filtered above), but the types cannot know
    ]
    timings = [t for t in timings if t[0] >= THROUGHPUT_MIN_ROWS]
    rows, seconds = sum(t[0] for t in timings), sum(t[1] for t in timings)
    default = (
        settings.BULK_DEEP_DEFAULT_ROWS_PER_SECOND
        if mode == ValidationMode.DEEP
        else settings.BULK_DEFAULT_ROWS_PER_SECOND
    )
    rate = rows / seconds if rows else default
    return max(1, round(total / rate))


def _seconds_at_max_qps(addresses: Sequence[str]) -> int:
    """With VERIFIER_DNS_MAX_QPS, a job cannot finish before one query for each domain not cached
    has been sent at that rate: a recent job on cached or fewer domains says nothing about it."""
    max_qps = settings.VERIFIER_DNS_MAX_QPS
    if max_qps <= 0 or not addresses:
        return 0
    domains = {parsed.ascii_domain for address in addresses if (parsed := parse(address))}
    uncached = len(domains) - len(DomainRecord.objects.get_many(domains))
    return math.ceil(uncached / max_qps)
