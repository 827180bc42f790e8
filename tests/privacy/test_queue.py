"""privacy/queue.py names every task by its dotted path: each name must be a task, and each task named."""

from __future__ import annotations

from django_q.models import Schedule

from privacy import queue, tasks
from tests.support.queues import defined_tasks, is_task_of, named_tasks


def test_every_name_queue_uses_is_a_function_of_privacy_tasks() -> None:
    for dotted in named_tasks(queue):
        assert is_task_of(dotted, tasks), dotted


def test_every_task_is_queued_or_scheduled_by_queue() -> None:
    assert defined_tasks(tasks) == named_tasks(queue)


def test_the_export_file_sweep_is_scheduled_hourly(db: None) -> None:
    sweep = Schedule.objects.get(func="privacy.tasks.expire_export_files")
    assert (sweep.schedule_type, sweep.minutes) == (Schedule.MINUTES, 60)
