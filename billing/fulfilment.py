"""What Stripe tells us, applied exactly once: a paid pack grants its credits, a paid plan invoice
grants the plan's period credits and sets the plan, an ended subscription returns to `free`.

Stripe redelivers, duplicates and reorders webhook events, and the portal's own purchase sees the
same PaymentIntent too. So each event is recorded by id, each grant by its PaymentIntent or invoice
id (`Payment.stripe_id`, unique), and the record and the grant commit in one transaction: whoever
comes second finds the row and grants nothing. Anything unknown or mismatched grants nothing and
is recorded for staff (`StripeEvent`, admin and dashboard).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.auditing import Event, audit
from accounts.models import Account, Plan
from billing import prices
from billing.gateway import StripeDict
from billing.models import Customer, Payment, StripeEvent, purchase_words
from billing.receipts import receipt_mail
from billing.services import credits_grant

log = logging.getLogger(__name__)
Outcome = StripeEvent.Outcome
FREE_PLAN = "free"
# Who paid, in the audit log, when no member did by hand.
AUTO_RECHARGE = "auto-recharge"
PLAN_RENEWAL = "plan renewal"
PLAN_ENDED = "end of the paid period"


@dataclass(frozen=True)
class Applied:
    outcome: str
    detail: str = ""
    account: Account | None = None


def event_apply(event: StripeDict) -> StripeEvent:
    """Record a verified event by id and act on it, in one transaction; a redelivery does nothing."""
    with transaction.atomic():
        recorded, created = StripeEvent.objects.get_or_create(
            event_id=event["id"], defaults={"type": event["type"][:60], "outcome": Outcome.IGNORED}
        )
        if not created:
            return recorded
        applied = _dispatch(event["type"], (event.get("data") or {}).get("object") or {})
        recorded.outcome, recorded.detail, recorded.account = applied.outcome, applied.detail[:255], applied.account
        recorded.save(update_fields=["outcome", "detail", "account"])
    # A mismatch is what staff must look at; other types are expected when an endpoint sends every event.
    level = logging.WARNING if applied.outcome == Outcome.MISMATCHED else logging.INFO
    log.log(level, "stripe event %s %s: %s %s", event["id"], event["type"], applied.outcome, applied.detail)
    return recorded


def _dispatch(kind: str, obj: dict[str, Any]) -> Applied:
    if kind == "payment_intent.succeeded":
        return intent_succeeded(obj)
    if kind in ("invoice.paid", "invoice.payment_succeeded"):
        return invoice_paid(obj)
    if kind == "customer.subscription.deleted":
        return subscription_deleted(obj)
    return Applied(Outcome.IGNORED, f"{kind} is not acted on")


def intent_succeeded(intent: StripeDict, *, receipt_url: str = "", off_session: bool = False) -> Applied:
    """A pack's PaymentIntent succeeded: grant the pack once, if the money matches its price. Who
    bought it is in the intent's metadata (`by`), which the webhook sees as the portal does."""
    metadata = intent.get("metadata") or {}
    account = _account(metadata.get("account"))
    price = prices.pack(str(metadata.get("pack", "")))
    if account is None or price is None:
        return Applied(Outcome.MISMATCHED, f"unknown account or pack in metadata of {intent.get('id')}")
    # `amount_received` is Stripe's; an API without it (localstripe) has `amount` on a succeeded intent.
    received = intent.get("amount_received", intent.get("amount"))
    currency = str(intent.get("currency", "")).lower()
    if intent.get("status") != "succeeded" or received != price.cents or currency != price.currency:
        paid = f"{intent.get('status')} {received} {currency}"
        return Applied(Outcome.MISMATCHED, f"{paid}; {price.code} is {price.cents} {price.currency}", account)
    granted = _grant(
        account=account,
        stripe_id=str(intent["id"]),
        kind=Payment.Kind.PACK,
        price=price,
        credits=price.credits,
        extra={"receipt_url": receipt_url or _charge_receipt(intent), "off_session": off_session},
        created=int(intent.get("created") or 0),
        by=str(metadata.get("by") or (AUTO_RECHARGE if off_session else "")),
    )
    return Applied(Outcome.GRANTED if granted else Outcome.ALREADY, price.code, account)


def invoice_paid(invoice: StripeDict, *, by: str = PLAN_RENEWAL) -> Applied:
    """A plan's invoice was paid: its period's credits once (an upgrade's: the difference), and the plan.
    `by`: the member who chose the plan; an invoice the portal did not pay at once is a renewal."""
    customer = Customer.objects.select_related("account").filter(stripe_id=invoice.get("customer") or "").first()
    if customer is None:
        return Applied(Outcome.MISMATCHED, f"invoice {invoice.get('id')} of an unknown customer")
    account = customer.account
    lines = (invoice.get("lines") or {}).get("data") or []
    price, credits = _invoice_credits(lines)
    if invoice.get("status") != "paid" or price is None:
        return Applied(Outcome.MISMATCHED, f"invoice {invoice.get('id')}: not paid, or no plan of ours", account)
    if str(invoice.get("currency", "")).lower() != price.currency:
        return Applied(Outcome.MISMATCHED, f"invoice {invoice.get('id')} in {invoice.get('currency')}", account)
    created = int(invoice.get("created") or invoice.get("date") or 0)
    with transaction.atomic():
        granted = _grant(
            account=account,
            stripe_id=str(invoice["id"]),
            kind=Payment.Kind.PLAN,
            price=price,
            credits=credits,
            extra={"receipt_url": str(invoice.get("hosted_invoice_url") or invoice.get("invoice_pdf") or "")},
            created=created,
            by=by,
        )
        if granted:
            _plan_follow_invoice(customer, price, invoice, created, by)
    return Applied(Outcome.GRANTED if granted else Outcome.ALREADY, f"{price.code} +{credits}", account)


def _invoice_credits(lines: list[dict[str, Any]]) -> tuple[prices.Price | None, int]:
    """The plan an invoice pays for and the credits it is worth. An upgrade's pro-rated invoice
    credits back the unused time of the old plan (a negative line): it is worth the difference."""
    paid = [_line_plan(line) for line in lines if int(line.get("amount") or 0) > 0]
    unused = [_line_plan(line) for line in lines if int(line.get("amount") or 0) < 0]
    plan = next((price for price in reversed(paid) if price is not None), None)
    if plan is None:
        return None, 0
    old = next((price for price in unused if price is not None), None)
    return plan, max(0, plan.credits - (old.credits if old else 0))


def _line_plan(line: dict[str, Any]) -> prices.Price | None:
    """The plan of an invoice line: `plan` (older API versions, localstripe), `price`, or, from API
    version 2025-03-31 on, `pricing.price_details.price` (a plan's id is its price's id)."""
    plan = (
        line.get("plan") or line.get("price") or ((line.get("pricing") or {}).get("price_details") or {}).get("price")
    )
    plan_id = plan.get("id", "") if isinstance(plan, dict) else plan
    return prices.plan_for_stripe_plan(str(plan_id or ""))


def _plan_follow_invoice(
    customer: Customer, price: prices.Price, invoice: StripeDict, created: int, by: str = PLAN_RENEWAL
) -> None:
    """Set the plan the invoice paid for, unless a newer plan invoice was already applied (reordering)."""
    newer = Payment.objects.filter(account=customer.account, kind=Payment.Kind.PLAN, stripe_created__gt=created)
    if newer.exists():
        return
    customer.subscription_id = str(_invoice_subscription(invoice) or customer.subscription_id)
    customer.subscription_plan, customer.pending_plan = price.code, ""
    customer.period_end = _period_end(invoice)
    customer.save(update_fields=["subscription_id", "subscription_plan", "pending_plan", "period_end"])
    plan_set(customer.account, price.code, by=by)


def subscription_deleted(subscription: StripeDict) -> Applied:
    """The subscription ended: the account returns to `free` when its paid period is over."""
    customer = Customer.objects.select_related("account").filter(stripe_id=subscription.get("customer") or "").first()
    if customer is None or subscription.get("id") != customer.subscription_id:
        return Applied(Outcome.MISMATCHED, f"subscription {subscription.get('id')} is not an account's current one")
    # A downgrade to a cheaper paid plan waits for this: billing.subscriptions.periods_expire starts it.
    pending = customer.pending_plan if prices.plan(customer.pending_plan) else FREE_PLAN
    items = (subscription.get("items") or {}).get("data") or [{}]
    # On the subscription before API version 2025-03-31, on its items from then on.
    ends = _timestamp(subscription.get("current_period_end") or items[0].get("current_period_end")) or timezone.now()
    customer.subscription_id, customer.subscription_plan = "", ""
    customer.pending_plan, customer.period_end = pending, ends
    if pending == FREE_PLAN and ends <= timezone.now():
        customer.pending_plan, customer.period_end = "", None
        plan_set(customer.account, FREE_PLAN, by=PLAN_ENDED)
    customer.save(update_fields=["subscription_id", "subscription_plan", "pending_plan", "period_end"])
    return Applied(Outcome.UPDATED, f"{pending} from {ends:%Y-%m-%d %H:%M}", customer.account)


def _grant(
    *,
    account: Account,
    stripe_id: str,
    kind: str,
    price: prices.Price,
    credits: int,
    extra: dict[str, Any],
    created: int,
    by: str = "",
) -> bool:
    """Record the payment and grant its credits, once: False when it was already granted."""
    with transaction.atomic():
        fields = {"cents": price.cents, "currency": price.currency, "credits": credits, "stripe_created": created}
        payment, new = Payment.objects.get_or_create(
            stripe_id=stripe_id,
            defaults={"account": account, "kind": kind, "product": price.code, "status": Payment.Status.SUCCEEDED}
            | fields
            | extra,
        )
        if not new:
            # A failed attempt recorded earlier (a declined auto-recharge) may succeed later: claim it once.
            won = Payment.objects.filter(pk=payment.pk, status=Payment.Status.FAILED).update(
                status=Payment.Status.SUCCEEDED, failure="", **fields
            )
            if not won:
                return False
        what = purchase_words(kind, price.code, credits)
        if credits:
            credits_grant(account=account, amount=credits, reference=stripe_id, note=f"Paid: {what}")
        # Stripe reports it, so no address; who: the member who bought it, or what did (docs/portal.md, "Audit log").
        audit(None, account, Event.CREDITS_GRANTED, f"Paid by card: {what} ({stripe_id})", by=by)
        transaction.on_commit(lambda: receipt_mail(payment_id=payment.pk))
    return True


def plan_set(account: Account, code: str, *, by: str = "") -> None:
    plan = Plan.objects.get(code=code)
    if Account.objects.filter(pk=account.pk).exclude(plan=plan).update(plan=plan):
        audit(None, account, Event.PLAN_CHANGED, f"Plan {plan.name}, by its Stripe subscription", by=by)
    account.plan = plan


def _account(public_id: Any) -> Account | None:
    try:
        return Account.objects.filter(public_id=uuid.UUID(str(public_id))).first()
    except ValueError:
        return None


def _invoice_subscription(invoice: StripeDict) -> str:
    """The invoice's subscription: `subscription`, or from API version 2025-03-31 on under `parent`."""
    parent = (invoice.get("parent") or {}).get("subscription_details") or {}
    return str(invoice.get("subscription") or parent.get("subscription") or "")


def _charge_receipt(intent: StripeDict) -> str:
    charge = intent.get("latest_charge")
    return str(charge.get("receipt_url") or "") if isinstance(charge, dict) else ""


def _period_end(invoice: StripeDict) -> datetime | None:
    lines = (invoice.get("lines") or {}).get("data") or []
    ends = [(line.get("period") or {}).get("end") for line in lines]
    return _timestamp(max((end for end in ends if end), default=invoice.get("period_end")))


def _timestamp(value: Any) -> datetime | None:
    return datetime.fromtimestamp(int(value), UTC) if value else None
