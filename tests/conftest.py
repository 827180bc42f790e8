"""Shared fixtures: a real loopback DNS server, personas, and an API client.

Personas (as in healthchecks' hc/test.py): `owner` is the customer under test,
`outsider` another customer who must never see the owner's data, `staff` runs
the business from the admin.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from accounts.models import Account
from tests.factories import AccountFactory, UserFactory, issue_key
from tests.support.dns_server import A_ONLY, MX, NULL_MX, SERVFAIL, SILENT, DnsServer
from tests.support.metrics import TOKEN as METRICS_TOKEN

# The loopback zone every test starts from. Tests may add names; they are reset after.
BASE_ZONE = {
    "good.com": MX("mx1.good.com", "mx2.good.com"),
    "company.com": MX("mail.company.com"),
    "gmail.com": MX("gmail-smtp-in.l.google.com"),
    "yahoo.com": MX("mta5.am0.yahoodns.net"),
    "mailinator.com": MX("mail.mailinator.com"),
    "sub.mailinator.com": MX("mail.mailinator.com"),
    "aonly.com": A_ONLY,
    "nullmx.com": NULL_MX,
    "servfail.com": SERVFAIL,
    "silent.com": SILENT,
    "xn--mnchen-3ya.de": MX("mx.muenchen.de"),
    "gmsil.com": MX("mx.gmsil.com"),
}


@pytest.fixture(scope="session")
def dns_server() -> Iterator[DnsServer]:
    with DnsServer(zone=dict(BASE_ZONE)) as server:
        yield server


@pytest.fixture(autouse=True)
def _bulk_tasks_keep_the_test_process_priority(settings: Any) -> None:
    # Tasks run in this process here; at the bulk niceness they would lower it, and with it every
    # server a later test starts (the e2e web server must run at 0). Real workers keep the default.
    settings.BULK_WORKER_NICENESS = 0


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # The production hasher takes seconds per password on a small CI machine.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _resolver_on_loopback(settings: Any, dns_server: DnsServer) -> Iterator[DnsServer]:
    settings.VERIFIER_DNS_NAMESERVERS = [dns_server.address]
    settings.VERIFIER_DNS_TIMEOUT = 0.3
    settings.VERIFIER_DNS_LIFETIME = 0.3
    yield dns_server
    dns_server.zone.clear()
    dns_server.zone.update(BASE_ZONE)
    dns_server.delay = 0.0
    dns_server.loss, dns_server.max_qps = 0.0, None


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


@pytest.fixture
def owner(db: None) -> Persona:
    return make_persona(plan_code="starter", credits=1000)


@pytest.fixture
def outsider(db: None) -> Persona:
    return make_persona(plan_code="starter", credits=1000)


@pytest.fixture
def staff(db: None) -> Any:
    return UserFactory(email="staff@service.example.com", is_staff=True, is_superuser=True)


@pytest.fixture
def admin_client_(staff: Any) -> Client:
    client = Client()
    client.force_login(staff)
    return client


@pytest.fixture
def metrics_on(settings: Any) -> None:
    settings.METRICS_TOKEN = METRICS_TOKEN
