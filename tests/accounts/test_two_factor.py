"""Two-factor sign-in (django-otp): enrolment on /settings/security, the second step at sign-in,
single-use recovery codes, an owner's switch for every member, and ADMIN_REQUIRE_2FA."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Membership, Role
from tests.accounts.conftest import PASSWORD, SECRET, enrol
from tests.conftest import Persona
from tests.factories import UserFactory
from tests.support.portal import logged_in
from tests.support.totp import totp_code


def sign_in(email: str, code: str | None = None) -> tuple[Client, Any]:
    client = Client()
    response = client.post(reverse("login"), {"username": email, "password": PASSWORD})
    if code is not None:
        response = client.post(reverse("login-code"), {"code": code})
    return client, response


def test_enrolment_shows_the_secret_and_a_qr_code_and_gives_ten_recovery_codes(owner: Persona) -> None:
    secret, codes = enrol(logged_in(owner))
    assert len(secret) == 32 and len(codes) == 10 and len(set(codes)) == 10
    assert owner.account.audit_events.filter(action="2fa_changed").exists()


def test_a_wrong_code_does_not_turn_it_on(owner: Persona) -> None:
    client = logged_in(owner)
    client.get(reverse("security"))
    page = client.post(reverse("security"), {"code": "000000"}).content.decode()
    assert "That code is not right" in page and "data-totp-secret" in page
    assert sign_in(owner.account.email)[1]["Location"] == reverse("dashboard")  # still one step


def test_sign_in_asks_for_the_code_after_the_password(owner: Persona) -> None:
    secret, _ = enrol(logged_in(owner))
    client, response = sign_in(owner.account.email)
    assert response["Location"] == reverse("login-code")
    assert client.get(reverse("dashboard")).status_code == 302  # not signed in yet
    with time_machine.travel(timezone.now() + timedelta(seconds=31)):  # the enrolment's code is spent
        wrong = client.post(reverse("login-code"), {"code": "123456"})
        assert "That code is not right" in wrong.content.decode()
    with time_machine.travel(timezone.now() + timedelta(seconds=33)):  # past django-otp's 1 s back-off
        right = client.post(reverse("login-code"), {"code": totp_code(secret)})
        assert right["Location"] == reverse("dashboard")
        assert client.get(reverse("dashboard")).status_code == 200


def test_a_recovery_code_works_once(owner: Persona) -> None:
    _, codes = enrol(logged_in(owner))
    first, response = sign_in(owner.account.email, codes[0])
    assert first.get(reverse("dashboard")).status_code == 200
    second, again = sign_in(owner.account.email, codes[0])
    assert "That code is not right" in again.content.decode()
    assert second.get(reverse("dashboard")).status_code == 302


def test_code_attempts_are_limited_per_person_and_address(owner: Persona) -> None:
    _, codes = enrol(logged_in(owner))
    client, _ = sign_in(owner.account.email)
    for _ in range(5):
        client.post(reverse("login-code"), {"code": "99999999"})
    refused = client.post(reverse("login-code"), {"code": codes[0]}).content.decode()
    assert "Too many wrong codes" in refused
    assert client.get(reverse("dashboard")).status_code == 302


def test_turning_it_off_asks_for_a_code(owner: Persona) -> None:
    client = logged_in(owner)
    _, codes = enrol(client)
    refused = client.post(reverse("security"), {"code": "nonsense"}).content.decode()
    assert "That code is not right" in refused
    with time_machine.travel(timezone.now() + timedelta(seconds=2)):  # past django-otp's 1 s back-off
        client.post(reverse("security"), {"code": codes[1]})
    assert sign_in(owner.account.email)[1]["Location"] == reverse("dashboard")


def test_an_owner_requires_it_of_every_member(owner: Persona) -> None:
    developer = UserFactory()
    Membership.objects.create(account=owner.account, user=developer, role=Role.DEVELOPER)
    owner_client = logged_in(owner)
    refused = owner_client.post(reverse("require-2fa"), {"required": "on"}, follow=True).content.decode()
    assert "Turn on two-factor sign-in for yourself first" in refused
    enrol(owner_client)
    owner_client.post(reverse("require-2fa"), {"required": "on"})
    member = Client()
    member.force_login(developer)
    assert member.get(reverse("keys"))["Location"] == reverse("security")
    enrol(member)
    assert member.get(reverse("keys")).status_code == 200


def test_an_admin_cannot_flip_the_owners_switch(owner: Persona) -> None:
    admin = UserFactory()
    Membership.objects.create(account=owner.account, user=admin, role=Role.ADMIN)
    client = Client()
    client.force_login(admin)
    assert client.post(reverse("require-2fa"), {"required": "on"}).status_code == 403


def test_the_staff_admin_wants_a_code_when_admin_require_2fa_is_set(staff: Any, settings: Any) -> None:
    settings.ADMIN_REQUIRE_2FA = True
    by_password = Client()
    by_password.force_login(staff)
    assert by_password.get("/admin/")["Location"].startswith("/admin/login/")
    secret, _ = enrol(by_password)
    with time_machine.travel(timezone.now() + timedelta(seconds=31)):
        client = Client()
        client.post(reverse("login"), {"username": staff.username, "password": PASSWORD})
        client.post(reverse("login-code"), {"code": totp_code(secret)})
        assert client.get("/admin/").status_code == 200


def test_a_wrong_two_factor_code_is_a_failed_sign_in_in_the_audit_log(owner: Persona) -> None:
    enrol(logged_in(owner))
    client, _ = sign_in(owner.account.email)
    with time_machine.travel(timezone.now() + timedelta(seconds=31)):
        client.post(reverse("login-code"), {"code": "123456"})
    failed = owner.account.audit_events.get(action="sign_in_failed")
    assert (failed.who, failed.detail) == (owner.account.owner.email, "wrong two-factor code")


def test_the_recovery_codes_can_be_copied_and_downloaded(owner: Persona) -> None:
    client = logged_in(owner)
    page = client.get(reverse("security")).content.decode()
    secret = SECRET.search(page).group(1)  # type: ignore[union-attr]
    done = client.post(reverse("security"), {"code": totp_code(secret)}).content.decode()
    codes = re.findall(r"<li>([a-z0-9]+)</li>", done.split("data-recovery-codes")[1].split("</ul>")[0])
    assert 'data-copy="#recovery-codes-text"' in done and "\n".join(codes) + "\n</textarea>" in done
    assert f'href="data:text/plain;charset=utf-8,{"%0A".join(codes)}%0A"' in done


def test_the_enrolment_form_speaks_only_of_the_apps_code(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("security")).content.decode()
    assert "recovery code" not in page.split("<form")[1]
