"""The one place billing's work goes on the django-q2 queue (named by dotted path, as jobs/queue.py)."""

from __future__ import annotations

from django.db import transaction
from django_q.tasks import async_task

from lib.schedules import Every

TASKS = "billing.tasks"
RECHARGE = f"{TASKS}.recharge"
ANSWERS_FILE = f"{TASKS}.answers_file"

# Kept in the database by `billing/apps.py` at every migrate.
SCHEDULES = (
    Every(1, "billing: auto-recharge accounts under their threshold", f"{TASKS}.recharge_due"),
    Every(5, "billing: apply plan changes at the period's end", f"{TASKS}.expire_periods"),
    # Batches of valid answers whose filing task was lost (a worker killed before it ran).
    Every(10, "billing: file batches of valid answers left over", f"{TASKS}.answers_file_left"),
)


def recharge(customer_id: int) -> None:
    async_task(RECHARGE, customer_id)


def answers_filing_on_commit(account_id: int) -> None:
    """After the caller's transaction commits (a bulk job's completion): its valid answers filed
    (billing/guarantee.py `answers_filed`), off the job's clock."""
    transaction.on_commit(lambda: async_task(ANSWERS_FILE, account_id))
