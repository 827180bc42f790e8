"""Bulk-job fixtures (a private media root, synchronous tasks, a loopback HTTP receiver), shared with the jobs suite."""

from tests.jobs.conftest import media, receiver, run_tasks  # noqa: F401
