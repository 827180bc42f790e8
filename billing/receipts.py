"""Receipts a finance team can file: a number, the date, what was bought in words, the amount, and
the account's billing name and address (docs/portal.md, "Billing"); mailed when a card is charged."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.urls import reverse

from accounts.models import Account
from billing.models import BillingDetails, Payment


def billing_details(account: Account) -> BillingDetails:
    """The account's billing details, blank until someone sets them (nothing is stored until then)."""
    return BillingDetails.objects.filter(account=account).first() or BillingDetails(account=account)


def billing_details_set(*, account: Account, name: str, address: str, tax_id: str) -> BillingDetails:
    details = billing_details(account)
    details.name, details.address, details.tax_id = name.strip(), address.strip(), tax_id.strip()
    details.save()
    return details


def receipt_context(payment: Payment) -> dict[str, Any]:
    return {
        "payment": payment,
        "details": billing_details(payment.account),
        "seller": settings.BILLING_SELLER,
        "contact_email": settings.BILLING_CONTACT_EMAIL,
    }


def receipt_url(payment: Payment) -> str:
    return settings.SITE_URL + reverse("billing-receipt", args=[payment.pk])


def receipt_mail(*, payment_id: int) -> None:
    """Tell the account's owner that their card was charged, with the receipt's link."""
    payment = Payment.objects.select_related("account").filter(pk=payment_id, status=Payment.Status.SUCCEEDED).first()
    if payment is None:
        return
    how = "Your automatic top-up charged your card" if payment.off_session else "Your card was charged"
    body = (
        f"{how} {payment.amount} for {payment.description}.\n\n"
        f"Receipt {payment.number}, {payment.created_at:%d %B %Y}.\n"
        f"Print or save it: {receipt_url(payment)}\n\n"
        f"Questions about a payment: {settings.BILLING_CONTACT_EMAIL}"
    )
    send_mail(f"Receipt {payment.number}: {payment.amount}", body, None, [payment.account.email])
