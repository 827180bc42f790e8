"""Bulk-job fixtures (a private media root, synchronous tasks), shared with the jobs suite."""

from tests.jobs.conftest import media, run_tasks  # noqa: F401
