"""What a customer does with a card: save it, buy a pack, auto-recharge (plans: billing/subscriptions.py).

Each call talks to Stripe (billing/gateway.py) outside any database transaction, then applies
what Stripe answered through billing/fulfilment.py, the same code the webhook runs: the portal
shows a purchase at once, and the webhook arriving later finds it granted and grants nothing.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.core.mail import send_mail
from django.utils import timezone

from accounts.models import Account
from billing import gateway, prices
from billing.fulfilment import AUTO_RECHARGE, intent_succeeded
from billing.gateway import PaymentFailed
from billing.models import Customer, Payment
from lib.errors import DomainError

log = logging.getLogger(__name__)
RECHARGE_INTERVAL = timedelta(hours=1)


class NoCard(DomainError):
    code = "card_required"
    message = "Save a card first."


class UnknownProduct(DomainError):
    code = "invalid_request"
    message = "There is no such pack or plan."


def customer_ensure(*, account: Account) -> Customer:
    """The account's customer at Stripe, created on first use."""
    existing = Customer.objects.filter(account=account).first()
    if existing is not None:
        return existing
    with gateway.refusals():
        stripe_id = gateway.customer_create(email=account.email, account_id=str(account.public_id))
    return Customer.objects.get_or_create(account=account, defaults={"stripe_id": stripe_id})[0]


def card_setup(*, account: Account) -> str:
    """A client secret for Stripe Elements to save a card with (a SetupIntent)."""
    customer = customer_ensure(account=account)
    with gateway.refusals():
        return gateway.setup_intent_create(customer_id=customer.stripe_id)


def card_save(*, account: Account, setup_intent_id: str) -> Customer:
    customer = customer_ensure(account=account)
    if not setup_intent_id.startswith("seti_"):
        raise PaymentFailed("The card was not saved; please enter it again.")
    with gateway.refusals():
        method, label = gateway.setup_intent_card(customer_id=customer.stripe_id, setup_intent_id=setup_intent_id)
    customer.card_payment_method, customer.card_label, customer.recharge_failure = method, label, ""
    customer.save(update_fields=["card_payment_method", "card_label", "recharge_failure"])
    return customer


def pack_buy(*, account: Account, pack_code: str, key: str, off_session: bool = False, by: str = "") -> Payment:
    """Charge the saved card for a pack and grant it; raises PaymentFailed (recorded) on a decline.

    `key` makes a repeated request (a double click, a retried form) one charge at Stripe; `by` is
    the member who bought it (the audit log's "Who"; an off-session charge is the auto-recharge's).
    """
    price = prices.pack(pack_code)
    if price is None:
        raise UnknownProduct(param="pack")
    customer = customer_with_card(account)
    intent = gateway.pack_charge(
        customer_id=customer.stripe_id,
        card=customer.card_payment_method,
        price=price,
        account_id=str(account.public_id),
        off_session=off_session,
        key=f"pack-{account.public_id}-{key}",
        by=AUTO_RECHARGE if off_session else by,
    )
    if intent.get("status") != "succeeded":
        _failed(account, intent, price, off_session)
    intent_succeeded(intent, receipt_url=gateway.receipt_url(intent), off_session=off_session)
    return Payment.objects.get(stripe_id=intent["id"])


def _failed(account: Account, intent: gateway.StripeDict, price: prices.Price, off_session: bool) -> None:
    message = str((intent.get("last_payment_error") or {}).get("message") or "The card was declined.")
    if intent.get("id"):
        Payment.objects.get_or_create(
            stripe_id=intent["id"],
            defaults={
                "account": account,
                "kind": Payment.Kind.PACK,
                "product": price.code,
                "cents": price.cents,
                "currency": price.currency,
                "status": Payment.Status.FAILED,
                "failure": message[:255],
                "off_session": off_session,
                "stripe_created": int(intent.get("created") or 0),
            },
        )
    raise PaymentFailed(message)


def customer_with_card(account: Account) -> Customer:
    customer = Customer.objects.filter(account=account).exclude(card_payment_method="").first()
    if customer is None:
        raise NoCard
    return customer


def recharge_set(*, account: Account, pack_code: str, below: int) -> None:
    """Turn auto-recharge on (a pack and a threshold) or off (pack_code "")."""
    if pack_code and prices.pack(pack_code) is None:
        raise UnknownProduct(param="pack")
    customer = customer_with_card(account)
    customer.recharge_pack, customer.recharge_below, customer.recharge_failure = pack_code, max(0, below), ""
    customer.save(update_fields=["recharge_pack", "recharge_below", "recharge_failure"])


def recharges_due() -> list[int]:
    """Claim the accounts under their threshold not charged in the last hour; returns their customers' ids.

    The claim is a conditional UPDATE: two workers never charge one account twice in the hour.
    """
    now = timezone.now()
    recent = now - RECHARGE_INTERVAL
    candidates = Customer.objects.exclude(recharge_pack="").exclude(card_payment_method="").select_related("account")
    claimed = []
    for customer in candidates:
        if customer.account.credit_balance >= customer.recharge_below:
            continue
        never = Customer.objects.filter(pk=customer.pk, recharge_attempted_at__isnull=True)
        stale = Customer.objects.filter(pk=customer.pk, recharge_attempted_at__lt=recent)
        if (never | stale).update(recharge_attempted_at=now):
            claimed.append(customer.pk)
    return claimed


def recharge_run(customer_id: int) -> None:
    """Buy the chosen pack off-session. A decline turns auto-recharge off (never a loop of
    declines), is shown on the billing page and emailed to the owner."""
    customer = Customer.objects.select_related("account").get(pk=customer_id)
    if not customer.recharge_pack:
        return
    key = f"recharge-{customer.recharge_attempted_at and customer.recharge_attempted_at.isoformat()}"
    try:
        pack_buy(account=customer.account, pack_code=customer.recharge_pack, key=key, off_session=True)
    except DomainError as error:
        _recharge_stopped(customer, error.message)


def _recharge_stopped(customer: Customer, reason: str) -> None:
    price = prices.pack(customer.recharge_pack)
    pack = f"{price.credits:,} credits ({price.amount})" if price else "credits"  # in words, not its code
    customer.recharge_pack, customer.recharge_failure = "", f"Auto-recharge of {pack} failed: {reason}"[:255]
    customer.save(update_fields=["recharge_pack", "recharge_failure"])
    log.warning("auto-recharge of account %s failed: %s", customer.account.public_id, reason)
    send_mail(
        "Your automatic credit top-up failed",
        f"We tried to buy {pack} with your saved card and the payment failed: {reason}\n\n"
        "Auto-recharge is now off, so we will not try again. Save a working card on the billing page and "
        "turn it back on.",
        None,
        [customer.account.email],
    )
