"""Billing's queued work: thin entry points that take ids and call billing/payments.py and billing/subscriptions.py."""

from __future__ import annotations

from billing import gateway, guarantee, payments, queue, subscriptions


def recharge_due() -> int:
    """Every minute: claim the accounts under their auto-recharge threshold and queue each charge."""
    if not gateway.enabled():
        return 0
    claimed = payments.recharges_due()
    for customer_id in claimed:
        queue.recharge(customer_id)
    return len(claimed)


def recharge(customer_id: int) -> None:
    payments.recharge_run(customer_id)


def expire_periods() -> int:
    return subscriptions.periods_expire()


def answers_file(account_id: int) -> int:
    return guarantee.answers_filed(account_id, pause=guarantee.FILING_PAUSE)


def answers_file_left() -> int:
    return guarantee.answers_left_filed()
