"""The portal's verify form: the same service, cache and charge as POST /v1/verify."""

from __future__ import annotations

from django.urls import reverse

from billing.models import LedgerEntry
from tests.conftest import Persona, make_persona
from tests.support.dns_server import MX, DnsServer
from tests.support.portal import logged_in


def verify(persona: Persona, email: str, **headers: str) -> str:
    response = logged_in(persona).post(reverse("verify"), {"email": email}, headers=headers)
    assert response.status_code == 200
    return response.content.decode()


def balance(persona: Persona) -> int:
    persona.account.refresh_from_db()
    return persona.account.credit_balance


def test_verify_form_charges_exactly_one_credit(owner: Persona) -> None:
    before = balance(owner)
    verify(owner, "jane@good.com")
    assert balance(owner) == before - 1
    assert LedgerEntry.objects.filter(account=owner.account, kind="spend").count() == 1


def test_verify_form_shows_the_verdict_card(owner: Persona) -> None:
    page = verify(owner, "  Info@Good.com ")
    assert "info@good.com" in page
    assert "data-verdict-status>risky<" in page
    assert "role_based" in page
    assert "63/100" in page  # a role address in the `other` family (verification/engine/scores.py)


def test_verify_form_offers_to_check_the_suggested_address(owner: Persona) -> None:
    page = verify(owner, "jane@gmial.com")
    assert '<input type="hidden" name="email" value="jane@gmail.com">' in page


def test_a_typo_on_a_throwaway_list_reads_as_a_likely_typo_not_a_throwaway_inbox(
    owner: Persona, dns_server: DnsServer
) -> None:
    dns_server.set("gmial.com", MX("mx.gmial.com"))  # as the offline DNS server answers: listed, but takes mail
    page = verify(owner, "jane@gmial.com")
    assert "data-verdict-status>risky<" in page and 'badge-outline">disposable<' in page  # the API's verdict
    facts = page.split('<dl class="verdict-facts">', 1)[1]
    assert facts.lstrip().startswith("<div data-reason><dt>Reason</dt><dd>Likely typo of jane@gmail.com</dd>")
    assert "Disposable domain: <strong>on a throwaway list, as typo domains often are</strong>" in page
    assert "Throwaway address" not in page


def test_a_verdict_without_a_suggestion_gives_its_sub_status_in_words(owner: Persona) -> None:
    assert "<dt>Reason</dt><dd>Throwaway address</dd>" in verify(owner, "someone@mailinator.com")
    assert "data-reason" not in verify(owner, "jane@good.com")


def test_verify_form_lists_every_check(owner: Persona) -> None:
    page = verify(owner, "someone@mailinator.com")
    assert "Disposable domain: <strong>yes</strong>" in page
    assert "Mailbox accepted (SMTP): <strong>not checked in fast mode</strong>" in page


def test_verify_form_shares_the_api_cache_and_still_charges(owner: Persona) -> None:
    owner.verify("jane@good.com")
    before = balance(owner)
    page = verify(owner, "jane@good.com")
    assert "from your recent results" in page
    assert balance(owner) == before - 1


def test_verify_form_with_no_credits_refuses_and_charges_nothing(db: None) -> None:
    broke = make_persona(plan_code="free", credits=0)
    page = verify(broke, "jane@good.com")
    assert "You have no credits left" in page
    assert "data-verdict-status" not in page
    assert not LedgerEntry.objects.filter(account=broke.account).exists()


def test_htmx_request_gets_only_the_panel(owner: Persona) -> None:
    page = verify(owner, "jane@good.com", HX_Request="true")
    assert page.lstrip().startswith('<div id="verify-panel">')
    assert "<html" not in page


def test_empty_form_costs_nothing(owner: Persona) -> None:
    before = balance(owner)
    assert "This field is required" in verify(owner, "")
    assert balance(owner) == before


def test_an_unconfirmed_sign_up_with_no_credits_is_told_they_come_with_the_link(db: None) -> None:
    from accounts.plans import SIGNUP_CREDITS

    unconfirmed = make_persona(plan_code="free", credits=0)
    unconfirmed.account.email_confirmed_at = None
    unconfirmed.account.save(update_fields=["email_confirmed_at"])
    page = verify(unconfirmed, "jane@good.com")
    assert f"your {SIGNUP_CREDITS} free credits arrive with the link we sent to {unconfirmed.account.email}" in page
    assert reverse("signup-confirm-resend") in page and "You have no credits left" not in page


def test_no_credits_links_to_billing(db: None) -> None:
    page = verify(make_persona(plan_code="free", credits=0), "jane@good.com")
    assert f'<a href="{reverse("billing")}">Get more credits on Billing</a>' in page
