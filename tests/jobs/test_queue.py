"""jobs/queue.py names every task by its dotted path: each name must be a task, and each task named."""

from __future__ import annotations

import gc
from datetime import timedelta
from typing import Any

import pytest
from django.urls import clear_url_caches, get_resolver
from django.utils import timezone
from django_q.models import Schedule
from django_q.signals import post_spawn

from jobs import queue, tasks
from tests.support.queues import defined_tasks, is_task_of, named_tasks
from verification.engine import disposable, lists, providers, smtp_replies


def _named() -> set[str]:
    return named_tasks(queue, not_tasks=frozenset({queue.RESUME_SCHEDULE}))


def test_every_name_queue_uses_is_a_function_of_jobs_tasks() -> None:
    for dotted in _named():
        assert is_task_of(dotted, tasks), dotted


def test_every_task_is_queued_or_scheduled_by_queue() -> None:
    assert defined_tasks(tasks) == _named()


def test_a_worker_reads_the_verdict_rules_lists_as_it_starts() -> None:
    # Before the first chunk it runs: the first customer after a start does not wait for them.
    loaded = (disposable.disposable_domains, lists.role_local_parts, providers.host_patterns)
    for cached in loaded:
        cached.cache_clear()
    try:
        post_spawn.send(sender="django_q", proc_name="Process-1")
        assert [cached.cache_info().currsize for cached in loaded] == [1, 1, 1]
        assert gc.get_freeze_count() > 0  # and out of the collector's walks from then on
    finally:
        gc.unfreeze()


def test_a_worker_reads_the_smtp_reply_rules_and_the_url_patterns_as_it_starts() -> None:
    # A fresh stack's first deep chunk and first callback do not wait for them.
    smtp_replies.rules.cache_clear()
    clear_url_caches()
    try:
        post_spawn.send(sender="django_q", proc_name="Process-1")
        assert smtp_replies.rules.cache_info().currsize == 1
        assert get_resolver()._populated
    finally:
        gc.unfreeze()


def test_workers_stopping_together_for_a_broken_resolver_leave_one_resume_schedule(
    db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another worker's schedule lands just before this one's: django-q2 refuses it, quietly."""
    theirs, ours = timezone.now() + timedelta(minutes=1), timezone.now() + timedelta(minutes=2)
    real = queue.schedule

    def another_worker_first(*args: Any, **kwargs: Any) -> Schedule:
        real(*args, **{**kwargs, "next_run": theirs})
        return real(*args, **kwargs)

    monkeypatch.setattr(queue, "schedule", another_worker_first)
    queue.chunk_work_resumed(when=ours)
    resumes = Schedule.objects.filter(name=queue.RESUME_SCHEDULE)
    assert list(resumes.values_list("func", "next_run")) == [(queue.RESUME_CHUNKS, theirs)]
