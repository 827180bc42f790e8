"""A customer's plan: switch (at once up, at the period's end down), cancel, and the periods that
end (billing/payments.py has the card, packs and auto-recharge). As there, each call talks to
Stripe outside any transaction and applies the answer through billing/fulfilment.py, which the
webhook runs too.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.utils import timezone

from accounts.models import Account
from billing import gateway, prices
from billing.fulfilment import FREE_PLAN, PLAN_ENDED, invoice_paid, plan_set
from billing.gateway import PaymentFailed
from billing.models import Customer
from billing.payments import UnknownProduct, customer_with_card
from lib.errors import DomainError

log = logging.getLogger(__name__)
RECHARGE_INTERVAL = timedelta(hours=1)


def plan_switch(*, account: Account, plan_code: str, by: str = "") -> str:
    """Subscribe, upgrade at once (pro-rated by Stripe) or downgrade at the period's end; returns what
    happened. `by`: the member who chose it (the audit log's "Who")."""
    with gateway.refusals():
        return _plan_switch(account, plan_code, by)


def _plan_switch(account: Account, plan_code: str, by: str) -> str:
    if plan_code == FREE_PLAN:
        return plan_cancel(account=account)
    price = prices.plan(plan_code)
    if price is None:
        raise UnknownProduct(param="plan")
    customer = customer_with_card(account)
    current = prices.plan(customer.subscription_plan) if customer.subscription_id else None
    if current is None:
        started = gateway.subscription_create(
            customer_id=customer.stripe_id, price=price, account_id=str(account.public_id)
        )
        subscription_id = str(started["subscription"]["id"])
        if not _paid(started["invoice"]):
            gateway.subscription_cancel(subscription_id=subscription_id)  # never a plan left unpaid at Stripe
            raise PaymentFailed(gateway.DECLINED_PLAN)
        return _invoice_applied(customer, subscription_id, started["invoice"], price, by)
    if price.code == current.code:
        return _resume(customer, price)
    if price.credits > current.credits:
        upgraded = gateway.subscription_upgrade(
            subscription_id=customer.subscription_id, customer_id=customer.stripe_id, price=price
        )
        return _invoice_applied(customer, customer.subscription_id, upgraded["invoice"], price, by)
    gateway.subscription_end_at_period_end(subscription_id=customer.subscription_id, end=True)
    _pending(customer, price.code)
    return f"You move to {price.code.title()} when the paid period ends."


def plan_cancel(*, account: Account) -> str:
    customer = Customer.objects.filter(account=account).exclude(subscription_id="").first()
    if customer is None:
        return "You are on no paid plan."
    with gateway.refusals():
        gateway.subscription_end_at_period_end(subscription_id=customer.subscription_id, end=True)
    _pending(customer, FREE_PLAN)
    return "Your plan ends with the paid period; then you are on Free."


def _resume(customer: Customer, price: prices.Price) -> str:
    if customer.pending_plan:
        gateway.subscription_end_at_period_end(subscription_id=customer.subscription_id, end=False)
        _pending(customer, "")
        return f"You stay on {price.code.title()}."
    return f"You are on {price.code.title()} already."


def _pending(customer: Customer, code: str) -> None:
    customer.pending_plan = code
    customer.save(update_fields=["pending_plan"])


def _invoice_applied(
    customer: Customer, subscription_id: str, invoice: gateway.StripeDict | None, price: prices.Price, by: str
) -> str:
    if invoice is None or not _paid(invoice):
        raise PaymentFailed(gateway.DECLINED_PLAN)
    Customer.objects.filter(pk=customer.pk).update(subscription_id=subscription_id)
    invoice_paid({**invoice, "subscription": subscription_id}, by=by)
    return f"You are on {price.code.title()} now."


def _paid(invoice: gateway.StripeDict | None) -> bool:
    return invoice is not None and invoice.get("status") == "paid"


def periods_expire() -> int:
    """Plan changes whose paid period is over: `free` after a cancellation, or the cheaper plan a
    downgrade chose (a new subscription on the saved card; `free` if it is declined). Returns how many."""
    due = Customer.objects.exclude(pending_plan="").filter(subscription_id="", period_end__lte=timezone.now())
    moved = 0
    for customer in due.select_related("account"):
        claimed = Customer.objects.filter(pk=customer.pk, pending_plan=customer.pending_plan, subscription_id="")
        if not claimed.update(pending_plan="", period_end=None):
            continue  # another worker has it
        moved += 1
        if customer.pending_plan != FREE_PLAN:
            try:
                plan_switch(account=customer.account, plan_code=customer.pending_plan, by=PLAN_ENDED)
                continue
            except DomainError as error:
                log.warning("downgrade of account %s failed: %s", customer.account.public_id, error.message)
        plan_set(customer.account, FREE_PLAN, by=PLAN_ENDED)
    return moved
