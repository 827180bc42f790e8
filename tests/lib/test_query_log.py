"""lib/query_log.py: with DEBUG on, a worker's statements run without SQLite's quoting query unless read."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django_q.signals import post_spawn

from jobs.models import Job
from lib.query_log import SQL_LOGGER, statements_logged_only_when_read

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "sqlite", reason="the quoting query is SQLite's"),
]


@pytest.fixture
def statements(settings: Any) -> Iterator[list[str]]:
    """Every statement SQLite runs on this connection, as SQLite's own trace sees it, with DEBUG on."""
    settings.DEBUG = True
    connection.ensure_connection()
    seen: list[str] = []
    connection.connection.set_trace_callback(seen.append)
    yield seen
    connection.connection.set_trace_callback(None)


def _quoting(statements: list[str]) -> list[str]:
    return [sql for sql in statements if "QUOTE(" in sql.upper()]


def test_a_worker_started_runs_its_statements_without_the_quoting_query(statements: list[str]) -> None:
    post_spawn.send(sender="django_q", proc_name="Process-1")
    Job.objects.filter(pk="job_unknown").exists()
    assert any("jobs_job" in sql for sql in statements)
    assert _quoting(statements) == []


def test_a_test_capturing_the_statements_still_sees_them(statements: list[str]) -> None:
    statements_logged_only_when_read()
    with CaptureQueriesContext(connection) as captured:
        Job.objects.filter(pk="job_unknown").exists()
    assert "job_unknown" in captured.captured_queries[-1]["sql"]


def test_the_sql_logger_at_debug_still_logs_each_statement_with_its_values(
    statements: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    statements_logged_only_when_read()
    with caplog.at_level(logging.DEBUG, logger=SQL_LOGGER.name):
        Job.objects.filter(pk="job_unknown").exists()
    assert any("job_unknown" in record.getMessage() for record in caplog.records)
    assert _quoting(statements) != []  # what it costs: Django quotes the values to log them
