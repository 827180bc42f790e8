"""The one place billing's work goes on the django-q2 queue (named by dotted path, as jobs/queue.py)."""

from __future__ import annotations

from django_q.tasks import async_task

from lib.schedules import Every

TASKS = "billing.tasks"
RECHARGE = f"{TASKS}.recharge"

# Kept in the database by `billing/apps.py` at every migrate.
SCHEDULES = (
    Every(1, "billing: auto-recharge accounts under their threshold", f"{TASKS}.recharge_due"),
    Every(5, "billing: apply plan changes at the period's end", f"{TASKS}.expire_periods"),
)


def recharge(customer_id: int) -> None:
    async_task(RECHARGE, customer_id)
