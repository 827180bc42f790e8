"""billing/queue.py names every task by its dotted path: each name must be a task, and each task named."""

from __future__ import annotations

import inspect
from typing import Any

from billing import queue, tasks
from billing.models import Customer
from billing.services import credits_spend


def _named() -> set[str]:
    constants = {value for name, value in vars(queue).items() if name.isupper() and isinstance(value, str)}
    return (constants - {queue.TASKS}) | {every.func for every in queue.SCHEDULES}


def test_every_name_queue_uses_is_a_function_of_billing_tasks() -> None:
    for dotted in _named():
        module, _, name = dotted.rpartition(".")
        assert module == "billing.tasks" and inspect.isfunction(getattr(tasks, name, None)), dotted


def test_every_task_is_queued_or_scheduled_by_queue() -> None:
    defined = {
        f"billing.tasks.{name}"
        for name, f in vars(tasks).items()
        if inspect.isfunction(f) and f.__module__ == tasks.__name__
    }
    assert defined == _named()


def test_without_stripe_the_recharge_schedule_charges_nothing(owner: Any) -> None:
    Customer.objects.create(
        account=owner.account,
        stripe_id="cus_1",
        card_payment_method="pm_1",
        recharge_pack="pack_1k",
        recharge_below=5000,
    )
    credits_spend(account=owner.account, amount=1)
    assert tasks.recharge_due() == 0
    assert Customer.objects.get().recharge_attempted_at is None
