"""Paying with confidence (docs/portal.md, "Billing"): receipts in words with the billing details, a
mail for each charge, the plan switch asked once with its renewal date, and the audit log naming who paid."""

from __future__ import annotations

from io import BytesIO
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from pypdf import PdfReader

from accounts.models import AuditEvent, Role
from billing import payments, tasks
from billing.models import LedgerEntry, Payment
from billing.services import credits_spend
from tests.billing.conftest import logged_in, save_card
from tests.support.localstripe import LocalStripe
from tests.support.personas import joined

pytestmark = pytest.mark.usefixtures("stripe_live")


def bought(owner: Any, stripe: LocalStripe, pack: str = "pack_1k") -> Client:
    client = logged_in(owner)
    save_card(client, stripe)
    client.post(f"/billing/packs/{pack}", {"purchase_key": "a"})
    return client


def test_a_pack_bought_in_the_portal_is_audited_as_the_member_who_bought_it(
    owner: Any, stripe_live: LocalStripe
) -> None:
    bought(owner, stripe_live)
    event = AuditEvent.objects.get(account=owner.account, action=AuditEvent.Action.CREDITS_GRANTED)
    assert event.who == owner.account.owner.email and "1,000 credits" in event.detail


def test_an_auto_recharge_is_audited_as_the_auto_recharge(owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(owner)
    save_card(client, stripe_live)
    client.post("/billing/recharge", {"pack": "pack_1k", "below": "500"})
    credits_spend(account=owner.account, amount=600)
    [due] = payments.recharges_due()
    tasks.recharge(due)
    event = AuditEvent.objects.get(account=owner.account, action=AuditEvent.Action.CREDITS_GRANTED)
    assert event.who == "auto-recharge"


def test_a_plan_taken_in_the_portal_is_audited_as_the_member_not_staff(owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(owner)
    save_card(client, stripe_live)
    client.post("/billing/plan", {"plan": "pro", "confirm": "yes"})
    events = AuditEvent.objects.filter(account=owner.account, action__in=["plan_changed", "credits_granted"])
    assert {event.who for event in events} == {owner.account.owner.email}


def test_the_ledger_and_payments_say_what_was_bought_in_words(owner: Any, stripe_live: LocalStripe) -> None:
    page = bought(owner, stripe_live).get("/billing").content.decode()
    assert LedgerEntry.objects.filter(account=owner.account, note="Paid: 1,000 credits").exists()
    assert "1,000 credits ($10.00)" in page and "pack_1k" not in page.split('id="ledger"')[1]


def test_a_charge_mails_the_owner_its_receipt(
    owner: Any, stripe_live: LocalStripe, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        bought(owner, stripe_live)
    payment = Payment.objects.get(account=owner.account)
    [message] = [m for m in mail.outbox if m.subject.startswith("Receipt")]
    assert message.to == [owner.account.email] and message.subject == f"Receipt {payment.number}: $10.00"
    assert "$10.00 for 1,000 credits" in message.body and f"/billing/receipts/{payment.pk}" in message.body


def test_the_receipt_shows_number_date_words_amount_and_the_billing_details(
    owner: Any, stripe_live: LocalStripe
) -> None:
    client = bought(owner, stripe_live)
    details = {"name": "Company Example Ltd", "address": "1 Example Street\nLondon", "tax_id": "GB123"}
    client.post("/billing/details", details)
    payment = Payment.objects.get(account=owner.account)
    page = client.get(f"/billing/receipts/{payment.pk}").content.decode()
    assert f"data-receipt-number>{payment.number}<" in page and payment.number.startswith("R-20")
    assert "data-receipt-what>1,000 credits<" in page and "data-receipt-total>$10.00<" in page
    assert "Company Example Ltd" in page and "1 Example Street<br>London" in page and "GB123" in page


def test_anothers_receipt_is_404(owner: Any, outsider: Any, stripe_live: LocalStripe) -> None:
    bought(owner, stripe_live)
    payment = Payment.objects.get(account=owner.account)
    assert logged_in(outsider).get(f"/billing/receipts/{payment.pk}").status_code == 404


def test_the_receipt_downloads_as_a_pdf_with_the_same_facts(owner: Any, stripe_live: LocalStripe) -> None:
    client = bought(owner, stripe_live)
    details = {"name": "Société Exemple SARL", "address": "1 rue de l'Exemple\n75001 Paris", "tax_id": "FR12345"}
    client.post("/billing/details", details)
    payment = Payment.objects.get(account=owner.account)
    response = client.get(f"/billing/receipts/{payment.pk}.pdf")
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == f'attachment; filename="receipt-{payment.number}.pdf"'
    document = PdfReader(BytesIO(response.content))
    text = document.pages[0].extract_text()
    assert response.content.startswith(b"%PDF-") and document.metadata.title == f"Receipt {payment.number}"
    for fact in (payment.number, f"{payment.created_at:%-d %B %Y}", "1,000 credits", "Total paid (USD)", "$10.00"):
        assert fact in text
    for fact in (
        "Société Exemple SARL",
        "1 rue de l'Exemple",
        "75001 Paris",
        "Tax number: FR12345",
        owner.account.email,
    ):
        assert fact in text


def test_a_billing_name_beyond_the_pdf_fonts_letters_prints_question_marks_not_an_error(
    owner: Any, stripe_live: LocalStripe
) -> None:
    client = bought(owner, stripe_live)
    client.post("/billing/details", {"name": "Maria’s — 株式会社", "address": "Tokyo", "tax_id": ""})
    payment = Payment.objects.get(account=owner.account)
    response = client.get(f"/billing/receipts/{payment.pk}.pdf")
    assert response.status_code == 200
    assert "Maria’s — ????" in PdfReader(BytesIO(response.content)).pages[0].extract_text()
    assert "Maria’s — 株式会社" in client.get(f"/billing/receipts/{payment.pk}").content.decode()


def test_anothers_receipt_pdf_is_404(owner: Any, outsider: Any, stripe_live: LocalStripe) -> None:
    bought(owner, stripe_live)
    payment = Payment.objects.get(account=owner.account)
    assert logged_in(outsider).get(f"/billing/receipts/{payment.pk}.pdf").status_code == 404


def test_a_member_without_billing_rights_cannot_download_the_receipt_pdf(owner: Any, stripe_live: LocalStripe) -> None:
    bought(owner, stripe_live)
    payment = Payment.objects.get(account=owner.account)
    _, developer = joined(owner, Role.DEVELOPER)
    assert developer.get(f"/billing/receipts/{payment.pk}.pdf").status_code == 403


def test_switching_plan_first_shows_what_is_charged_now_and_the_renewal_date(
    owner: Any, stripe_live: LocalStripe
) -> None:
    client = logged_in(owner)
    save_card(client, stripe_live)
    page = client.get("/billing/plan?plan=starter").content.decode()
    assert "data-charged-now>$29<" in page and "data-next-date" in page
    assert not Payment.objects.filter(account=owner.account).exists()


def test_a_plan_post_without_confirmation_charges_nothing(owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(owner)
    save_card(client, stripe_live)
    page = client.post("/billing/plan", {"plan": "starter"}).content.decode()
    assert "Pay $29 and switch" in page and not Payment.objects.filter(account=owner.account).exists()


def test_billing_shows_the_renewal_date_of_the_plan(owner: Any, stripe_live: LocalStripe) -> None:
    client = logged_in(owner)
    save_card(client, stripe_live)
    client.post("/billing/plan", {"plan": "starter", "confirm": "yes"})
    assert "Renews on" in client.get("/billing").content.decode()
