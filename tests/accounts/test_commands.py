"""The ops commands (README, "Plans, keys, credits")."""

from __future__ import annotations

import json
import re
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command

from accounts.models import Account
from tests.conftest import Persona


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_create_account_prints_one_json_object_that_works(client) -> None:
    created = json.loads(
        run("create_account", "--email", "Owner@Example.com", "--plan", "starter", "--credits", "1000", "--json")
    )
    assert set(created) == {"account_id", "api_key", "test_api_key", "signing_secret", "login_email", "password"}
    assert re.fullmatch(r"ev_live_[A-Za-z0-9]{32}", created["api_key"])
    assert re.fullmatch(r"ev_test_[A-Za-z0-9]{32}", created["test_api_key"])
    assert re.fullmatch(r"whsec_[A-Za-z0-9]{32}", created["signing_secret"])
    assert created["login_email"] == "owner@example.com"
    account = Account.objects.get(public_id=created["account_id"])
    assert (account.plan.code, account.credit_balance) == ("starter", 1000)
    assert authenticate(username="owner@example.com", password=created["password"]) is not None
    response = client.post(
        "/v1/verify",
        data='{"email": "a@good.com"}',
        content_type="application/json",
        headers={"Authorization": f"Bearer {created['api_key']}"},
    )
    assert response.status_code == 200


@pytest.mark.django_db
def test_create_account_uses_a_given_password() -> None:
    created = json.loads(run("create_account", "--email", "a@example.com", "--password", "s3cret-Pass!", "--json"))
    assert created["password"] == "s3cret-Pass!"


@pytest.mark.django_db
def test_api_key_is_stored_only_as_a_hash_with_a_prefix() -> None:
    created = json.loads(run("create_account", "--email", "a@example.com", "--json"))
    keys = Account.objects.get(public_id=created["account_id"]).api_keys
    for key, raw in [
        (keys.get(key_mode="live"), created["api_key"]),
        (keys.get(key_mode="test"), created["test_api_key"]),
    ]:
        assert key.prefix == raw[:12]
        assert raw not in key.key_hash
        assert len(key.key_hash) == 64


@pytest.mark.django_db
@pytest.mark.parametrize(
    "args",
    [
        ["--email", "not-an-email"],
        ["--email", "a@example.com", "--plan", "platinum"],
        ["--email", "a@example.com", "--credits", "-5"],
    ],
)
def test_create_account_refuses_bad_input_and_creates_nothing(args: list[str]) -> None:
    with pytest.raises(CommandError):
        run("create_account", *args, "--json")
    assert not Account.objects.exists()


@pytest.mark.django_db
def test_create_account_refuses_a_duplicate_email() -> None:
    run("create_account", "--email", "a@example.com", "--json")
    with pytest.raises(CommandError):
        run("create_account", "--email", "A@example.com", "--json")


def test_grant_credits_adds_to_balance_and_ledger(owner: Persona) -> None:
    run("grant_credits", str(owner.account.public_id), "250")
    owner.account.refresh_from_db()
    assert owner.account.credit_balance == 1250
    assert owner.account.ledger_entries.filter(kind="grant", amount=250).exists()


@pytest.mark.parametrize("args", [["00000000-0000-0000-0000-000000000000", "5"], ["not-a-uuid", "5"]])
def test_grant_credits_to_unknown_account_fails(db: None, args: list[str]) -> None:
    with pytest.raises(CommandError):
        run("grant_credits", *args)


def test_grant_credits_refuses_non_positive_amounts(owner: Persona) -> None:
    with pytest.raises(CommandError):
        run("grant_credits", str(owner.account.public_id), "0")


@pytest.mark.django_db
def test_plans_exist_with_their_limits() -> None:
    from accounts.models import Plan

    plans = {p.code: (p.allows_bulk, p.requests_per_second) for p in Plan.objects.all()}
    assert plans == {"free": (False, 5), "starter": (True, 20), "pro": (True, 50), "enterprise": (True, 200)}


def test_createsuperuser_takes_the_email_as_the_login(db: None, monkeypatch: Any) -> None:

    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a-long-staff-passphrase")
    call_command("createsuperuser", interactive=False, email="Boss@Service.example.com", stdout=StringIO())
    staff = authenticate(username="boss@service.example.com", password="a-long-staff-passphrase")
    assert staff is not None and staff.is_superuser


class Terminal(StringIO):
    def isatty(self) -> bool:
        return True


def test_createsuperuser_at_a_terminal_asks_for_an_email_address_not_a_username(db: None, monkeypatch: Any) -> None:
    asked: list[str] = []
    monkeypatch.setattr("builtins.input", lambda prompt="": asked.append(prompt) or "Boss@Service.example.com")
    monkeypatch.setattr("getpass.getpass", lambda prompt="": "a-long-staff-passphrase")
    call_command("createsuperuser", stdin=Terminal(), stdout=StringIO(), stderr=StringIO())
    assert asked == ["Email address (your login): "]
    staff = authenticate(username="boss@service.example.com", password="a-long-staff-passphrase")
    assert staff is not None and staff.is_superuser and staff.email.lower() == "boss@service.example.com"


def test_the_admins_log_in_asks_for_the_email(db: None) -> None:
    from django.test import Client

    page = Client().get("/admin/login/").content.decode()
    assert '<label for="id_username" class="required">Email:</label>' in page
