"""The check behind tests/jobs/test_queue.py and tests/billing/test_queue.py: an app's queue.py names
every task by its dotted path; each name must be a task of the app's tasks.py, and each task named."""

from __future__ import annotations

import inspect
from types import ModuleType


def named_tasks(queue: ModuleType, *, not_tasks: frozenset[str] = frozenset()) -> set[str]:
    """The dotted names `queue` queues or schedules: its upper-case string constants (but `TASKS`
    and the `not_tasks` that name other things) and its SCHEDULES' functions."""
    constants = {value for name, value in vars(queue).items() if name.isupper() and isinstance(value, str)}
    return (constants - {queue.TASKS, *not_tasks}) | {every.func for every in queue.SCHEDULES}


def defined_tasks(tasks: ModuleType) -> set[str]:
    """The dotted names of the functions `tasks` defines (not those it imports)."""
    return {
        f"{tasks.__name__}.{name}"
        for name, f in vars(tasks).items()
        if inspect.isfunction(f) and f.__module__ == tasks.__name__
    }


def is_task_of(dotted: str, tasks: ModuleType) -> bool:
    module, _, name = dotted.rpartition(".")
    return module == tasks.__name__ and inspect.isfunction(getattr(tasks, name, None))
