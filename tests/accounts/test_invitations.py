"""Invitations by email: a signed link, valid 7 days, used once; accepted as a new user or an
existing one."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import time_machine
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Membership, Role
from tests.conftest import Persona
from tests.factories import UserFactory
from tests.support.portal import logged_in

NEW_PASSWORD = "a long new passphrase 4711"


def invite(persona: Persona, email: str, role: str = "viewer", client: Client | None = None) -> str:
    """Invite `email`; returns the link's path, read from the mail as the console backend prints it."""
    sent = len(mail.outbox)
    (client or logged_in(persona)).post(reverse("member-invite"), {"email": email, "role": role})
    assert len(mail.outbox) == sent + 1, "no invitation mail"
    link = re.search(r"https?://\S+/invitations/\S+", mail.outbox[-1].body)
    assert link is not None
    return urlsplit(link.group()).path


def role_of(persona: Persona, email: str) -> str | None:
    found = Membership.objects.filter(account=persona.account, user__username=email).first()
    return found.role if found else None


def test_an_invitation_mail_names_the_account_the_role_and_the_link(owner: Persona) -> None:
    path = invite(owner, "New.Person@Example.com", "developer")
    message = mail.outbox[-1]
    assert message.to == ["new.person@example.com"]
    assert owner.account.email in message.body and "Your role:  Developer (the Members page" in message.body
    assert path.startswith("/invitations/")
    page = logged_in(owner).get(reverse("members")).content.decode()
    assert 'data-invitation="new.person@example.com"' in page
    assert owner.account.audit_events.filter(action="member_invited").exists()


def test_a_new_person_chooses_a_password_and_joins_with_the_invited_role(owner: Persona) -> None:
    path = invite(owner, "new@example.com")
    client = Client()
    assert 'name="password"' in client.get(path).content.decode()
    response = client.post(path, {"password": NEW_PASSWORD})
    assert response.status_code == 302
    assert role_of(owner, "new@example.com") == Role.VIEWER
    assert owner.account.email in client.get(reverse("dashboard")).content.decode()
    assert client.get(reverse("keys")).status_code == 403  # a viewer
    assert owner.account.audit_events.filter(action="member_joined", detail="new@example.com as viewer").exists()


def test_a_link_works_once(owner: Persona) -> None:
    path = invite(owner, "new@example.com")
    Client().post(path, {"password": NEW_PASSWORD})
    again = Client().get(path)
    assert again.status_code == 404 and "no longer valid" in again.content.decode()


def test_a_link_expires_after_seven_days(owner: Persona) -> None:
    path = invite(owner, "new@example.com")
    with time_machine.travel(timezone.now() + timedelta(days=7, seconds=1)):
        response = Client().post(path, {"password": NEW_PASSWORD})
    assert response.status_code == 404
    assert role_of(owner, "new@example.com") is None


def test_a_tampered_link_is_refused(owner: Persona) -> None:
    path = invite(owner, "new@example.com")
    assert Client().get(path[:-2] + ("xx" if not path.endswith("xx") else "yy")).status_code == 404
    assert Client().get("/invitations/1").status_code == 404


def test_someone_with_a_login_signs_in_and_joins_a_second_account(owner: Persona, outsider: Persona) -> None:
    email = outsider.account.email
    path = invite(owner, email, "admin")
    assert reverse("login") in Client().get(path).content.decode()  # anonymous: log in first
    client = logged_in(outsider)
    client.post(path)
    assert role_of(owner, email) == Role.ADMIN
    assert client.get(reverse("keys")).status_code == 200
    assert owner.account.api_keys.get().prefix in client.get(reverse("keys")).content.decode()  # now acting for it


def test_someone_signed_in_as_another_person_cannot_use_the_link(owner: Persona, outsider: Persona) -> None:
    path = invite(owner, "new@example.com")
    response = logged_in(outsider).post(path)
    assert response.status_code == 403
    assert role_of(owner, outsider.account.email) is None
    assert Client().get(path).status_code == 200  # still unused


def test_an_admin_cannot_invite_an_owner_nor_anyone_invite_a_member_again(owner: Persona) -> None:
    admin = UserFactory()
    Membership.objects.create(account=owner.account, user=admin, role=Role.ADMIN)
    client = Client()
    client.force_login(admin)
    as_owner = client.post(reverse("member-invite"), {"email": "boss@example.com", "role": "owner"})
    again = logged_in(owner).post(reverse("member-invite"), {"email": admin.email, "role": "viewer"})
    assert "Only an owner can invite an owner." in as_owner.content.decode()
    assert "is already a member" in again.content.decode()
    assert mail.outbox == []


def test_a_bad_address_sends_nothing(owner: Persona) -> None:
    response = logged_in(owner).post(reverse("member-invite"), {"email": "not-an-address", "role": "viewer"})
    assert "Enter a valid email address." in response.content.decode()
    assert mail.outbox == []


def test_a_weak_password_is_refused_and_the_link_still_works(owner: Persona, settings: Any) -> None:
    path = invite(owner, "new@example.com")
    response = Client().post(path, {"password": "123"})
    assert "This password is too short." in response.content.decode()
    assert role_of(owner, "new@example.com") is None
    assert Client().get(path).status_code == 200


def test_invitations_are_pruned_after_their_seven_days(owner: Persona) -> None:
    from lib.prune import prune_expired

    invite(owner, "new@example.com")
    with time_machine.travel(timezone.now() + timedelta(days=7, seconds=1)):
        prune_expired()
    assert not owner.account.invitations.exists()


def test_the_mail_as_the_console_backend_prints_it_holds_the_link_whole(owner: Persona, settings: Any) -> None:
    settings.SITE_URL = "https://verify.example.com"
    path = invite(owner, "someone.with.a.long.name@example.com", "developer")
    printed = mail.outbox[-1].message().as_string()
    assert "quoted-printable" not in printed
    assert f"https://verify.example.com{path}\n" in printed
