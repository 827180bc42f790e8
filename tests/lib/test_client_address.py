"""The client's address behind a reverse proxy: X-Forwarded-For is believed only from a peer in
TRUSTED_PROXIES, read right to left past the proxies; every door (throttles, key allow-lists,
the audit log) sees the same address."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import AuditEvent
from lib.client_address import trusted_networks
from tests.conftest import Persona

PROXY = "10.0.0.5"
PASSWORD = "correct horse battery staple"


@pytest.fixture
def behind_proxy(settings: Any) -> None:
    settings.TRUSTED_PROXIES = trusted_networks(["10.0.0.0/24", "::1"])


def sign_in(owner: Persona, *, peer: str, forwarded: str = "", password: str = PASSWORD) -> int:
    client = Client(REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=forwarded)
    email = owner.account.email
    return client.post(reverse("login"), {"username": email, "password": password}).status_code


def signed_in_from(owner: Persona) -> str | None:
    return owner.account.audit_events.filter(action=AuditEvent.Action.SIGNED_IN).latest("pk").ip


@pytest.mark.usefixtures("behind_proxy")
def test_the_audit_log_records_the_client_behind_a_trusted_proxy(owner: Persona) -> None:
    sign_in(owner, peer=PROXY, forwarded="203.0.113.9")
    assert signed_in_from(owner) == "203.0.113.9"


@pytest.mark.usefixtures("behind_proxy")
def test_entries_the_client_wrote_left_of_the_proxies_are_not_believed(owner: Persona) -> None:
    sign_in(owner, peer=PROXY, forwarded="198.51.100.66, 203.0.113.9, 10.0.0.7")
    assert signed_in_from(owner) == "203.0.113.9"


@pytest.mark.usefixtures("behind_proxy")
def test_a_forged_forwarded_header_from_an_untrusted_peer_changes_nothing(owner: Persona) -> None:
    sign_in(owner, peer="192.0.2.44", forwarded="203.0.113.9")
    assert signed_in_from(owner) == "192.0.2.44"


def test_without_trusted_proxies_the_socket_address_is_the_client(owner: Persona) -> None:
    sign_in(owner, peer=PROXY, forwarded="203.0.113.9")
    assert signed_in_from(owner) == PROXY


@pytest.mark.usefixtures("behind_proxy")
def test_the_login_throttle_counts_each_client_behind_the_proxy_apart(owner: Persona) -> None:
    for _ in range(6):
        sign_in(owner, peer=PROXY, forwarded="203.0.113.9", password="wrong")
    assert sign_in(owner, peer=PROXY, forwarded="203.0.113.9") == 200  # locked: the form again
    assert sign_in(owner, peer=PROXY, forwarded="203.0.113.10") == 302


@pytest.mark.usefixtures("behind_proxy")
def test_a_keys_allowed_networks_see_the_client_not_the_proxy(owner: Persona) -> None:
    owner.account.api_keys.update(allowed_ips="203.0.113.0/24")
    headers = owner.auth({})

    def verify(forwarded: str, peer: str = PROXY) -> int:
        client = Client(REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=forwarded)
        return client.post("/v1/verify", {"email": "a@good.com"}, "application/json", headers=headers).status_code

    assert verify("203.0.113.9") == 200
    assert verify("198.51.100.1") == 403
    assert verify("203.0.113.9", peer="192.0.2.44") == 403  # forged from outside the proxies
