"""Sensitive actions ask for the password (or a code) again when the sign-in is over 10 minutes old:
rotating the signing secret, creating a full key, removing a member, changing two-factor."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import time_machine
from django.urls import reverse
from django.utils import timezone

from accounts.models import Membership, Role
from tests.conftest import Persona
from tests.factories import UserFactory
from tests.support.portal import logged_in

PASSWORD = "correct horse battery staple"
LATER = timedelta(minutes=11)


def later() -> Any:
    return time_machine.travel(timezone.now() + LATER)


def test_rotating_the_secret_within_ten_minutes_asks_nothing(owner: Persona) -> None:
    secret = owner.account.signing_secret
    logged_in(owner).post(reverse("signing-secret-rotate"))
    owner.account.refresh_from_db()
    assert owner.account.signing_secret != secret


def test_rotating_the_secret_later_asks_for_the_password_first(owner: Persona) -> None:
    client = logged_in(owner)
    secret = owner.account.signing_secret
    with later():
        asked = client.post(reverse("signing-secret-rotate"), headers={"Referer": "/settings/signing-secret/rotate"})
        assert asked["Location"].startswith(reverse("reask"))
        owner.account.refresh_from_db()
        assert owner.account.signing_secret == secret  # nothing done yet
        wrong = client.post(reverse("reask"), {"password_or_code": "nope", "next": "/settings/signing-secret/rotate"})
        assert "neither your password nor a current code" in wrong.content.decode()
        back = client.post(reverse("reask"), {"password_or_code": PASSWORD, "next": "/settings/signing-secret/rotate"})
        assert back["Location"] == "/settings/signing-secret/rotate"
        client.post(reverse("signing-secret-rotate"))
    owner.account.refresh_from_db()
    assert owner.account.signing_secret != secret


def test_a_full_key_later_asks_again_a_verify_key_does_not(owner: Persona) -> None:
    client = logged_in(owner)
    with later():
        full = client.post(reverse("keys"), {"name": "Full", "scope": "full"})
        verify = client.post(reverse("keys"), {"name": "Verify", "scope": "verify"})
    assert full["Location"].startswith(reverse("reask"))
    assert verify.status_code == 200
    assert sorted(owner.account.api_keys.values_list("name", flat=True)) == ["Test key", "Verify"]


def test_removing_a_member_later_asks_again(owner: Persona) -> None:
    member = Membership.objects.create(account=owner.account, user=UserFactory(), role=Role.VIEWER)
    client = logged_in(owner)
    with later():
        response = client.post(reverse("member-remove", args=[member.pk]))
    assert response["Location"].startswith(reverse("reask"))
    assert Membership.objects.filter(pk=member.pk).exists()


def test_changing_two_factor_later_asks_again(owner: Persona) -> None:
    client = logged_in(owner)
    with later():
        response = client.post(reverse("security"), {"code": "123456"})
    assert response["Location"].startswith(reverse("reask"))


def test_the_page_it_comes_back_to_stays_on_this_site(owner: Persona) -> None:
    client = logged_in(owner)
    with later():
        back = client.post(reverse("reask"), {"password_or_code": PASSWORD, "next": "https://evil.example.com/"})
    assert back["Location"] == reverse("dashboard")
