"""billing/queue.py names every task by its dotted path: each name must be a task, and each task named."""

from __future__ import annotations

from typing import Any

from billing import queue, tasks
from billing.models import Customer
from billing.services import credits_spend
from tests.support.queues import defined_tasks, is_task_of, named_tasks


def test_every_name_queue_uses_is_a_function_of_billing_tasks() -> None:
    for dotted in named_tasks(queue):
        assert is_task_of(dotted, tasks), dotted


def test_every_task_is_queued_or_scheduled_by_queue() -> None:
    assert defined_tasks(tasks) == named_tasks(queue)


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
