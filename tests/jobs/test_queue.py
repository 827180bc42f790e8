"""jobs/queue.py names every task by its dotted path: each name must be a task, and each task named."""

from __future__ import annotations

from jobs import queue, tasks
from tests.support.queues import defined_tasks, is_task_of, named_tasks


def _named() -> set[str]:
    return named_tasks(queue, not_tasks=frozenset({queue.RESUME_SCHEDULE}))


def test_every_name_queue_uses_is_a_function_of_jobs_tasks() -> None:
    for dotted in _named():
        assert is_task_of(dotted, tasks), dotted


def test_every_task_is_queued_or_scheduled_by_queue() -> None:
    assert defined_tasks(tasks) == _named()
