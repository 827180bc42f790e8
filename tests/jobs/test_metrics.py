"""Bulk rows and callback attempts on /metrics, the tasks run in this process (see tests/ops/test_metrics.py)."""

from __future__ import annotations

from typing import Any

from tests.conftest import Persona
from tests.jobs.conftest import Receiver, RunTasks, run_schedules_as_they_fall_due, upload
from tests.support.metrics import scrape, value


def test_a_bulk_job_counts_its_rows_and_verdicts_with_source_bulk(
    metrics_on: None,
    owner: Persona,
    run_tasks: RunTasks,
) -> None:
    before = scrape()
    with run_tasks():
        upload(owner, b"email\na@good.com\nb@good.com\nx@nullmx.com\n")
    after = scrape()
    assert value(after, "verifier_bulk_rows_total") == value(before, "verifier_bulk_rows_total") + 3
    name = "verifier_verifications_total"
    assert value(after, name, status="valid", source="bulk") == value(before, name, status="valid", source="bulk") + 2
    assert value(after, name, status="valid", source="api") == value(before, name, status="valid", source="api")


def test_callback_attempts_are_counted_by_outcome(
    metrics_on: None,
    owner: Persona,
    settings: Any,
    receiver: Receiver,
    run_tasks: RunTasks,
) -> None:
    settings.CALLBACK_RETRY_BASE_SECONDS = 0.01
    receiver.statuses = [500, 200]
    before = scrape()
    with run_tasks():
        upload(owner, b"a@good.com\n", callback_url=receiver.url)
    run_schedules_as_they_fall_due()
    after = scrape()
    name = "verifier_callback_attempts_total"
    for outcome in ("failed", "delivered"):
        assert value(after, name, outcome=outcome) == value(before, name, outcome=outcome) + 1
