"""estimated_seconds (CONTRACT section 8): from the most recently completed jobs, weighted by rows."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from jobs.models import Job
from jobs.services import estimated_seconds
from tests.conftest import Persona


def finished(persona: Persona, rows: int, seconds: float, *, ago: timedelta = timedelta(minutes=1)) -> Job:
    completed = timezone.now() - ago
    return Job.objects.create(
        account=persona.account,
        status=Job.Status.COMPLETED,
        input_name="x",
        total=rows,
        processed=rows,
        started_at=completed - timedelta(seconds=seconds),
        completed_at=completed,
    )


def within_factor_3(estimate: int, real: float) -> bool:
    return real / 3 <= estimate <= real * 3


def test_tiny_jobs_do_not_drag_the_estimate_of_a_large_list(owner: Persona) -> None:
    # What the issue measured: a 50,000-row job that took 6 s, among many one-row jobs of a second each.
    finished(owner, 50_000, 6.0, ago=timedelta(minutes=5))
    for minute in range(19):
        finished(owner, 1, 1.0, ago=timedelta(seconds=minute))
    assert within_factor_3(estimated_seconds(50_000), 6.0)
    assert within_factor_3(estimated_seconds(20_000), 20_000 / 50_000 * 6.0)


def test_the_most_recent_jobs_count_not_old_ones(owner: Persona) -> None:
    # Created last, finished long ago: what counts is when a job completed, not when it was created.
    for minute in range(20):
        finished(owner, 10_000, 1.0, ago=timedelta(minutes=minute + 1))
    for hour in range(1, 101):
        finished(owner, 10_000, 100.0, ago=timedelta(hours=hour))
    assert within_factor_3(estimated_seconds(10_000), 1.0)


def test_without_any_history_the_default_rate_is_used(db: None, settings: object) -> None:
    settings.BULK_DEFAULT_ROWS_PER_SECOND = 500.0  # type: ignore[attr-defined]
    assert estimated_seconds(10_000) == 20
    assert estimated_seconds(1) == 1
