"""The bulk jobs' fixtures (a private media root, synchronous tasks): erasure and objections reach jobs."""

from __future__ import annotations

from tests.jobs.conftest import media, run_tasks

__all__ = ["media", "run_tasks"]
