"""The credit ledger is a financial record: no admin door deletes it; accounts are deactivated instead."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth import get_user_model
from django.db.models import ProtectedError
from django.test import Client
from django.urls import reverse

from accounts.models import Account, ApiKey
from billing.models import LedgerEntry
from billing.services import credits_grant
from jobs.models import Job
from tests.conftest import Persona
from tests.factories import AccountFactory, UserFactory


def bulk_delete(client: Client, changelist: str, pks: list[int]) -> str:
    data = {"action": "delete_selected", "post": "yes", ACTION_CHECKBOX_NAME: pks}
    return client.post(reverse(changelist), data, follow=True).content.decode()


def test_account_with_ledger_has_no_delete_page(admin_client_: Client, owner: Persona) -> None:
    url = reverse("admin:accounts_account_delete", args=[owner.account.pk])
    assert admin_client_.get(url).status_code == 403
    assert admin_client_.post(url, {"post": "yes"}).status_code == 403
    assert Account.objects.filter(pk=owner.account.pk).exists()


def test_bulk_delete_of_accounts_keeps_accounts_and_ledger(
    admin_client_: Client, owner: Persona, outsider: Persona
) -> None:
    page = bulk_delete(admin_client_, "admin:accounts_account_changelist", [owner.account.pk, outsider.account.pk])
    assert "2 of the selected accounts have a credit ledger" in page and "deactivate the account instead" in page
    assert Account.objects.count() == 2
    assert LedgerEntry.objects.count() == 2


def test_user_with_ledger_has_no_delete_page(admin_client_: Client, owner: Persona) -> None:
    user = owner.account.owner
    url = reverse("admin:auth_user_delete", args=[user.pk])
    assert admin_client_.get(url).status_code == 403
    assert admin_client_.post(url, {"post": "yes"}).status_code == 403
    assert get_user_model().objects.filter(pk=user.pk).exists()


def test_bulk_delete_of_users_does_not_cascade_into_the_ledger(admin_client_: Client, owner: Persona) -> None:
    page = bulk_delete(admin_client_, "admin:auth_user_changelist", [owner.account.owner.pk])
    assert "account has a credit ledger" in page and "Deactivate action" in page
    assert get_user_model().objects.filter(pk=owner.account.owner.pk).exists()
    assert LedgerEntry.objects.filter(account=owner.account).count() == 1


def test_deleting_a_user_in_code_is_refused_too(owner: Persona) -> None:
    with pytest.raises(ProtectedError):
        owner.account.owner.delete()
    assert LedgerEntry.objects.filter(account=owner.account).count() == 1


def test_user_and_account_without_ledger_can_still_be_deleted(admin_client_: Client, db: None) -> None:
    account = AccountFactory(credits=0)
    bare = UserFactory()
    bulk_delete(admin_client_, "admin:auth_user_changelist", [account.owner.pk, bare.pk])
    assert not Account.objects.filter(pk=account.pk).exists()
    assert not get_user_model().objects.filter(pk=bare.pk).exists()


def test_no_admin_changelist_offers_deleting_ledger_rows(admin_client_: Client, owner: Persona) -> None:
    page = admin_client_.get(reverse("admin:billing_ledgerentry_changelist")).content.decode()
    assert "delete_selected" not in page
    entry = LedgerEntry.objects.get(account=owner.account)
    bulk_delete(admin_client_, "admin:billing_ledgerentry_changelist", [entry.pk])
    assert LedgerEntry.objects.filter(pk=entry.pk).exists()


def test_deactivate_locks_the_owner_out_and_revokes_keys(admin_client_: Client, owner: Persona) -> None:
    data = {"action": "deactivate", ACTION_CHECKBOX_NAME: [owner.account.pk]}
    admin_client_.post(reverse("admin:accounts_account_changelist"), data)
    assert not get_user_model().objects.get(pk=owner.account.owner.pk).is_active
    assert not ApiKey.objects.filter(account=owner.account, revoked_at__isnull=True).exists()
    assert owner.verify("jane@good.com").status_code == 401
    assert LedgerEntry.objects.filter(account=owner.account).count() == 1


def test_account_page_shows_recent_ledger_jobs_and_keys(admin_client_: Client, owner: Persona) -> None:
    Job.objects.create(account=owner.account, input_name="x.csv", total=3, id="job_shown_on_the_account_page")
    key = owner.account.api_keys.get()
    page = admin_client_.get(reverse("admin:accounts_account_change", args=[owner.account.pk])).content.decode()
    ledger = page.split('id="recent-ledger"')[1].split('id="recent-jobs"')[0]
    assert "Grant" in ledger and "factory" in ledger
    assert "job_shown_on_the_account_page" in page.split('id="recent-jobs"')[1]
    assert key.prefix in page.split('id="api-keys"')[1]
    assert key.key_hash not in page


def test_account_page_shows_only_its_own_rows(admin_client_: Client, owner: Persona, outsider: Persona) -> None:
    Job.objects.create(account=outsider.account, input_name="x.csv", total=3, id="job_of_the_outsider")
    page = admin_client_.get(reverse("admin:accounts_account_change", args=[owner.account.pk])).content.decode()
    assert "job_of_the_outsider" not in page
    assert outsider.account.api_keys.get().prefix not in page


def test_the_admin_shows_24_hour_times_as_the_portal_does(owner: Persona, admin_client_: Client) -> None:
    with time_machine.travel(datetime(2026, 11, 24, 15, 4, tzinfo=UTC), tick=False):
        credits_grant(account=owner.account, amount=5, note="afternoon grant")
    page = admin_client_.get("/admin/billing/ledgerentry/").content.decode()
    assert "24 Nov 2026, 15:04" in page
    assert "p.m." not in page
