"""The staff admin: accounts, grants through the ledger, keys without their hashes, read-only records."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db.models import Sum
from django.test import Client
from django.urls import reverse

from accounts.models import Account, ApiKey, Plan
from billing.models import LedgerEntry
from tests.conftest import Persona


def grant(client: Client, accounts: list[Account], **form: Any) -> Any:
    data = {"action": "grant_credits", ACTION_CHECKBOX_NAME: [a.pk for a in accounts], **form}
    return client.post(reverse("admin:accounts_account_changelist"), data)


def ledger_sum(account: Account) -> int:
    return LedgerEntry.objects.filter(account=account).aggregate(total=Sum("amount"))["total"]


def test_account_list_shows_owner_plan_and_balance(admin_client_: Client, owner: Persona) -> None:
    page = admin_client_.get(reverse("admin:accounts_account_changelist")).content.decode()
    assert owner.account.owner.email in page
    assert "1000" in page


def test_account_search_by_owner_email(admin_client_: Client, owner: Persona, outsider: Persona) -> None:
    url = reverse("admin:accounts_account_changelist")
    page = admin_client_.get(url, {"q": owner.account.owner.email}).content.decode()
    assert owner.account.owner.email in page
    assert outsider.account.owner.email not in page


def test_account_filter_by_plan(admin_client_: Client, owner: Persona) -> None:
    url = reverse("admin:accounts_account_changelist")
    free = Plan.objects.get(code="free")
    assert owner.account.owner.email not in admin_client_.get(url, {"plan__id__exact": free.pk}).content.decode()


def test_staff_change_an_accounts_plan(admin_client_: Client, owner: Persona) -> None:
    pro = Plan.objects.get(code="pro")
    url = reverse("admin:accounts_account_change", args=[owner.account.pk])
    admin_client_.post(url, {"plan": pro.pk, "credit_balance": 5})
    account = Account.objects.get(pk=owner.account.pk)
    assert account.plan == pro
    assert account.credit_balance == 1000


def test_grant_credits_asks_for_amount_and_reason(admin_client_: Client, owner: Persona) -> None:
    page = grant(admin_client_, [owner.account]).content.decode()
    assert "Credits to grant" in page and "Reason" in page
    assert ledger_sum(owner.account) == 1000


def test_grant_credits_writes_a_ledger_entry(admin_client_: Client, owner: Persona, outsider: Persona) -> None:
    response = grant(admin_client_, [owner.account, outsider.account], apply="yes", amount=250, reason="Goodwill")
    assert response.status_code == 302
    for persona in (owner, outsider):
        account = Account.objects.get(pk=persona.account.pk)
        entry = LedgerEntry.objects.filter(account=account).first()
        assert entry is not None
        assert (entry.kind, entry.amount, entry.balance_after) == ("grant", 250, 1250)
        assert entry.note.startswith("Goodwill")
        assert account.credit_balance == ledger_sum(account) == 1250


def test_grant_credits_refuses_a_non_positive_amount(admin_client_: Client, owner: Persona) -> None:
    response = grant(admin_client_, [owner.account], apply="yes", amount=0, reason="Oops")
    assert response.status_code == 200
    assert "greater than or equal to 1" in response.content.decode()
    assert ledger_sum(owner.account) == 1000


def test_admin_never_renders_the_key_hash(admin_client_: Client, owner: Persona) -> None:
    key = owner.account.api_keys.get()
    pages = [
        admin_client_.get(reverse("admin:accounts_apikey_changelist")),
        admin_client_.get(reverse("admin:accounts_apikey_change", args=[key.pk])),
        admin_client_.get(reverse("admin:accounts_apikey_changelist"), {"q": key.prefix}),
    ]
    for page in pages:
        assert page.status_code == 200
        assert key.prefix in page.content.decode()
        assert key.key_hash not in page.content.decode()


def test_admin_revoke_action_makes_the_key_unusable(admin_client_: Client, owner: Persona) -> None:
    key = owner.account.api_keys.get()
    data = {"action": "revoke_keys", ACTION_CHECKBOX_NAME: [key.pk]}
    admin_client_.post(reverse("admin:accounts_apikey_changelist"), data)
    assert not ApiKey.objects.get(pk=key.pk).is_active
    assert owner.verify("jane@good.com").status_code == 401


def test_ledger_is_read_only_in_the_admin(admin_client_: Client, owner: Persona) -> None:
    entry = LedgerEntry.objects.filter(account=owner.account).get()
    assert admin_client_.get(reverse("admin:billing_ledgerentry_changelist")).status_code == 200
    assert admin_client_.get(reverse("admin:billing_ledgerentry_add")).status_code == 403
    assert admin_client_.post(reverse("admin:billing_ledgerentry_delete", args=[entry.pk])).status_code == 403
    admin_client_.post(reverse("admin:billing_ledgerentry_change", args=[entry.pk]), {"amount": 999999})
    assert LedgerEntry.objects.get(pk=entry.pk).amount == 1000


@pytest.mark.parametrize("model", ["verification_cachedverdict", "verification_domainrecord"])
def test_caches_are_read_only_in_the_admin(admin_client_: Client, owner: Persona, model: str) -> None:
    owner.verify("jane@good.com")
    assert admin_client_.get(reverse(f"admin:{model}_changelist")).status_code == 200
    assert admin_client_.get(reverse(f"admin:{model}_add")).status_code == 403


def test_customers_cannot_open_the_admin(owner: Persona) -> None:
    client = Client()
    client.force_login(owner.account.owner)
    assert client.get(reverse("admin:index")).status_code == 302


def test_an_accounts_admin_page_lists_its_members_and_roles(admin_client_: Client, owner: Persona) -> None:
    page = admin_client_.get(reverse("admin:accounts_account_change", args=[owner.account.pk])).content.decode()
    assert f"{owner.account.email}</a></td><td>owner</td>" in page


def test_the_admin_speaks_in_our_words(admin_client_: Client) -> None:
    page = admin_client_.get("/admin/").content.decode()
    assert "Verifier staff" in page and "Django administration" not in page
    assert "API keys" in page and "Api keys" not in page
    assert "OTP_TOTP" not in page and "OTP_STATIC" not in page and "Two-factor: recovery codes" in page
