"""The people the suite acts as (owner, outsider, a test key's caller): an account, its API key and
a Django test client. The fixtures are in tests/conftest.py; support code takes the type from here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.test import Client

from accounts.models import Account, ApiKey, KeyMode, Membership, Role
from tests.factories import AccountFactory, UserFactory, issue_key


@dataclass
class Persona:
    account: Account
    api_key: str
    client: Client

    def post_json(self, path: str, body: Any, **headers: str) -> Any:
        data = body if isinstance(body, (str, bytes)) else json.dumps(body)
        return self.client.post(path, data=data, content_type="application/json", headers=self.auth(headers))

    def get(self, path: str, **headers: str) -> Any:
        return self.client.get(path, headers=self.auth(headers))

    def verify(self, email: str, **headers: str) -> Any:
        return self.post_json("/v1/verify", {"email": email}, **headers)

    def auth(self, headers: dict[str, str]) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}", **headers}


def make_persona(**account_kwargs: Any) -> Persona:
    account = AccountFactory(**account_kwargs)
    return Persona(account=account, api_key=issue_key(account), client=Client())


def sandboxed(persona: Persona) -> Persona:
    """The same account, calling with a new test key (`ev_test_…`)."""
    raw = ApiKey.issue(account=persona.account, name="Sandbox", key_mode=KeyMode.TEST)[1]
    return Persona(account=persona.account, api_key=raw, client=persona.client)


def member_of(persona: Persona, role: str) -> Any:
    """A user with `role` in the persona's account (its owner for "owner")."""
    if role == "owner":
        return persona.account.owner
    user = UserFactory(email=f"{role}@example.com")
    Membership.objects.create(account=persona.account, user=user, role=role)
    return user


def joined(persona: Persona, role: Role, user: Any = None) -> tuple[Any, Client]:
    user = user or UserFactory()
    Membership.objects.create(account=persona.account, user=user, role=role)
    client = Client()
    client.force_login(user)
    return user, client


def membership(persona: Persona, user: Any) -> Membership:
    return Membership.objects.get(account=persona.account, user=user)
