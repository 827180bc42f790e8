"""jobs/queue.py names every task by its dotted path: each name must be a task, and each task named."""

from __future__ import annotations

import inspect

from jobs import queue, tasks


def _named() -> set[str]:
    constants = {value for name, value in vars(queue).items() if name.isupper() and isinstance(value, str)}
    return (constants - {queue.TASKS, queue.RESUME_SCHEDULE}) | {every.func for every in queue.SCHEDULES}


def test_every_name_queue_uses_is_a_function_of_jobs_tasks() -> None:
    for dotted in _named():
        module, _, name = dotted.rpartition(".")
        assert module == "jobs.tasks" and inspect.isfunction(getattr(tasks, name, None)), dotted


def test_every_task_is_queued_or_scheduled_by_queue() -> None:
    defined = {
        f"jobs.tasks.{name}"
        for name, f in vars(tasks).items()
        if inspect.isfunction(f) and f.__module__ == tasks.__name__
    }
    assert defined == _named()
