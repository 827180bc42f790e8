"""django-q2 entry points: thin, idempotent, and they take ids."""

from __future__ import annotations

from jobs.callbacks import callback_attempt
from jobs.services import chunk_run, chunks_requeue_stale, job_complete_if_done


def run_chunk(chunk_id: int) -> None:
    chunk_run(chunk_id=chunk_id)


def complete_job(job_id: str) -> None:
    job_complete_if_done(job_id=job_id)


def requeue_stale_chunks() -> int:
    """Every minute (a Schedule made by a data migration): re-queue abandoned chunks."""
    return chunks_requeue_stale()


def deliver_callback(delivery_id: int) -> None:
    callback_attempt(delivery_id=delivery_id)
