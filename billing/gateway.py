"""The one module that talks to Stripe, through the official SDK. Objects come back as plain dicts.

STRIPE_API_BASE points the SDK at localstripe in development and tests; nothing else differs. The
SDK is imported on first use, not with this module: it takes the better part of a second, and the
admin imports this module in every process (web, each worker) whether billing is on or not.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.conf import settings

from billing.prices import Price
from lib.errors import DomainError

if TYPE_CHECKING:
    import stripe

type StripeDict = dict[str, Any]
log = logging.getLogger(__name__)
DECLINED_PLAN = "The card was declined; the plan did not change."
UNAVAILABLE = "The payment service could not do this just now; nothing was charged. Please try again."


class PaymentFailed(DomainError):
    """The card was declined or could not be charged; `message` is Stripe's sentence for the customer."""

    code = "payment_failed"
    message = "The payment failed."


class BadSignature(DomainError):
    code = "invalid_signature"
    message = "The Stripe-Signature header does not match this body."


def sdk() -> ModuleType:
    import stripe

    return stripe


@contextmanager
def refusals() -> Iterator[None]:
    """Stripe's refusals as PaymentFailed, with Stripe's sentence for the customer where it has one."""
    stripe = sdk()
    try:
        yield
    except stripe.CardError as error:
        raise PaymentFailed(error.user_message or "The card was declined.") from None
    except stripe.StripeError as error:
        log.warning("stripe refused: %s", error)
        raise PaymentFailed(error.user_message or UNAVAILABLE) from None


def enabled() -> bool:
    return bool(settings.STRIPE_SECRET_KEY)


def webhook_secret_set() -> bool:
    return bool(settings.STRIPE_WEBHOOK_SECRET)


def dashboard_url(path: str) -> str:
    """A link into Stripe's dashboard (its test-mode half for a test key): `customers/cus_…`, `payments/pi_…`."""
    test = "test/" if settings.STRIPE_SECRET_KEY.startswith(("sk_test_", "rk_test_")) else ""
    return f"https://dashboard.stripe.com/{test}{path}"


def client() -> stripe.StripeClient:
    base = settings.STRIPE_API_BASE
    return sdk().StripeClient(
        settings.STRIPE_SECRET_KEY, base_addresses={"api": base} if base else None, max_network_retries=2
    )


def customer_create(*, email: str, account_id: str) -> str:
    customer = client().v1.customers.create(
        {"email": email, "metadata": {"account": account_id}}, {"idempotency_key": f"customer-{account_id}"}
    )
    return customer.id


def setup_intent_create(*, customer_id: str) -> str:
    """A SetupIntent for saving a card for later, off-session use; returns its client secret."""
    intent = client().v1.setup_intents.create({"customer": customer_id, "usage": "off_session"})
    return str(intent.client_secret)


def setup_intent_card(*, customer_id: str, setup_intent_id: str) -> tuple[str, str]:
    """The card a succeeded SetupIntent of this customer saved, made the customer's default:
    (payment method id, label). Raises PaymentFailed for another customer's or an unfinished one."""
    api = client().v1
    intent = api.setup_intents.retrieve(setup_intent_id).to_dict()
    if intent.get("customer") != customer_id or intent.get("status") != "succeeded":
        raise PaymentFailed("The card was not saved; please enter it again.")
    method_id = str(intent["payment_method"])
    method = api.payment_methods.retrieve(method_id).to_dict()
    api.customers.update(customer_id, {"invoice_settings": {"default_payment_method": method_id}})
    card = method.get("card") or {}
    return method_id, f"{card.get('brand', 'card')} •••• {card.get('last4', '????')}"


def pack_charge(
    *, customer_id: str, card: str, price: Price, account_id: str, off_session: bool, key: str, by: str = ""
) -> StripeDict:
    """Charge the saved card for a pack; returns the PaymentIntent, succeeded or failed.

    A decline comes back as an intent with `last_payment_error` (or, from Stripe itself, as a
    CardError carrying that intent): both are returned, so the caller records the failure.
    """
    params: dict[str, Any] = {
        "amount": price.cents,
        "currency": price.currency,
        "customer": customer_id,
        "payment_method": card,
        "confirm": True,
        "metadata": {"account": account_id, "pack": price.code, "by": by},
    }
    if off_session:
        params["off_session"] = True
    if not api_is_stand_in():
        # Stripe turns on every payment method by default, and a confirmed intent would then ask for a
        # return_url; a saved card needs none. localstripe refuses the parameter (it has only cards).
        params["payment_method_types"] = ["card"]
    stripe = sdk()
    try:
        return client().v1.payment_intents.create(params, {"idempotency_key": key}).to_dict()  # type: ignore[arg-type]
    except stripe.CardError as error:
        intent: Any = (error.error.payment_intent if error.error else None) or {}
        return {**_as_dict(intent), "last_payment_error": {"message": error.user_message or str(error)}}
    except stripe.StripeError as error:
        raise PaymentFailed(error.user_message or UNAVAILABLE) from None


def api_is_stand_in() -> bool:
    """STRIPE_API_BASE points at a stand-in on this machine (localstripe), not at Stripe."""
    host = urlsplit(settings.STRIPE_API_BASE).hostname or ""
    return host == "localhost" or (host.replace(".", "").isdigit() and host.startswith("127.")) or host == "::1"


def _as_dict(value: Any) -> StripeDict:
    return value.to_dict() if hasattr(value, "to_dict") else dict(value)


def receipt_url(intent: StripeDict) -> str:
    charge = intent.get("latest_charge")
    if isinstance(charge, str):
        charge = client().v1.charges.retrieve(charge).to_dict()
    return str((charge or {}).get("receipt_url") or "")


def stripe_plan_ensure(price: Price) -> str:
    """The Stripe plan for this price, created the first time (Stripe plans are immutable)."""
    api = client().v1
    try:
        api.plans.retrieve(price.stripe_plan_id)
    except sdk().InvalidRequestError:
        product = api.products.create({"name": f"Email verification: {price.code}"})
        api.plans.create(
            {
                "id": price.stripe_plan_id,
                "amount": price.cents,
                "currency": price.currency,
                "interval": "month",
                "product": product.id,
                "metadata": {"plan": price.code},
            }
        )
    return price.stripe_plan_id


def subscription_create(*, customer_id: str, price: Price, account_id: str) -> StripeDict:
    """Subscribe to a plan; the customer's default card (the saved one) pays the first invoice at once."""
    api = client().v1
    subscription = api.subscriptions.create(
        {
            "customer": customer_id,
            "items": [{"plan": stripe_plan_ensure(price)}],  # plans, not prices: localstripe has no Prices API
            "metadata": {"account": account_id, "plan": price.code},
        }
    ).to_dict()
    return {"subscription": subscription, "invoice": _invoice(subscription.get("latest_invoice"))}


def subscription_upgrade(*, subscription_id: str, customer_id: str, price: Price) -> StripeDict:
    """Move to a dearer plan at once: Stripe pro-rates the unused part of the old one and this
    invoices the difference now. Returns the subscription and the paid invoice. A declined
    payment voids that invoice and puts the old plan back (raising PaymentFailed)."""
    api = client().v1
    subscription = api.subscriptions.retrieve(subscription_id).to_dict()
    item = subscription["items"]["data"][0]
    _item_plan(subscription_id, item["id"], stripe_plan_ensure(price))
    invoice = api.invoices.create({"customer": customer_id, "subscription": subscription_id}).to_dict()
    try:
        paid = api.invoices.pay(invoice["id"]).to_dict()
    except sdk().CardError:
        paid = {"status": "open"}  # Stripe raises on a decline; localstripe leaves the invoice open
    if paid.get("status") != "paid":
        api.invoices.void_invoice(invoice["id"])
        _item_plan(subscription_id, item["id"], item["plan"]["id"])
        raise PaymentFailed(DECLINED_PLAN)
    return {"subscription": api.subscriptions.retrieve(subscription_id).to_dict(), "invoice": paid}


def _item_plan(subscription_id: str, item_id: str, plan_id: str) -> None:
    client().v1.subscriptions.update(
        subscription_id, {"items": [{"id": item_id, "plan": plan_id}], "cancel_at_period_end": False}
    )


def subscription_end_at_period_end(*, subscription_id: str, end: bool) -> StripeDict:
    return client().v1.subscriptions.update(subscription_id, {"cancel_at_period_end": end}).to_dict()


def subscription_cancel(*, subscription_id: str) -> None:
    """End a subscription now (one whose first invoice was not paid)."""
    client().v1.subscriptions.cancel(subscription_id)


def _invoice(invoice: Any) -> StripeDict | None:
    if invoice is None:
        return None
    if isinstance(invoice, str):
        return client().v1.invoices.retrieve(invoice).to_dict()
    return _as_dict(invoice)


def event_verified(*, payload: bytes, signature: str | None) -> StripeDict:
    """The event Stripe signed (`Stripe-Signature`, five minutes' tolerance), as a dict.

    Raises BadSignature for a bad, missing or stale signature and ValueError for a body that is not an event.
    """
    stripe = sdk()
    try:
        event = stripe.Webhook.construct_event(payload, signature, settings.STRIPE_WEBHOOK_SECRET, tolerance=300)
    except stripe.SignatureVerificationError:
        raise BadSignature from None
    data = event.to_dict()
    if not isinstance(data.get("id"), str) or not isinstance(data.get("type"), str):
        raise ValueError("not an event")
    return data
