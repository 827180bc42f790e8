"""Staff see the bounce guarantee's refunds per account on the dashboard, and those the cap held back."""

from __future__ import annotations

from datetime import timedelta

from django.test import Client
from django.utils import timezone

from billing.guarantee import guarantee_refunds
from billing.models import ValidAnswer
from feedback.reports import Report
from lib.address_keys import address_key, key_head
from tests.conftest import Persona

URL = "/admin/dashboard/"


def answered(persona: Persona, emails: list[str]) -> None:
    at = timezone.now() - timedelta(hours=1)
    ValidAnswer.objects.bulk_create(
        ValidAnswer(
            account=persona.account,
            address_key=(key := address_key(email)),
            key_head=key_head(key),
            provider_family="other",
            high_confidence=True,
            answered_at=at,
            expires_at=at + timedelta(days=400),
        )
        for email in emails
    )


def bounced(persona: Persona, emails: list[str]) -> None:
    now = timezone.now()
    reports: list[Report | None] = [Report(email, "good.com", "hard_bounce", now) for email in emails]
    guarantee_refunds(account=persona.account, reports=reports)


def test_refunds_credited_and_held_back_by_the_cap_are_shown_per_account(owner: Persona, admin_client_: Client) -> None:
    emails = [f"p{n}@good.com" for n in range(20)]  # 5 % of 20: one refund credited
    answered(owner, emails)
    bounced(owner, emails[:3])
    page = admin_client_.get(URL).content.decode()
    link = f'<a href="/admin/accounts/account/{owner.account.pk}/change/">'
    assert f'<tr data-figure="guarantee-refunds"><th scope="row">{link}' in page
    assert f"{owner.account.email}</a></th><td>1</td><td>2</td></tr>" in page
