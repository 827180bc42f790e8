"""The audit log: who did what to an account, when, from which address; in the portal for owners
and admins, in the admin for staff; pruned after a year."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import AuditEvent, Membership, Role
from lib.prune import prune_expired
from tests.conftest import Persona
from tests.factories import UserFactory
from tests.support.portal import logged_in

Event = AuditEvent.Action
PASSWORD = "correct horse battery staple"


def events(persona: Persona) -> list[tuple[str, str, str | None]]:
    """(action, who, address), oldest first."""
    rows = persona.account.audit_events.order_by("created_at", "pk")
    return [(e.action, e.who, e.ip) for e in rows]


def test_sign_ins_and_failed_sign_ins_are_recorded_with_the_address(owner: Persona) -> None:
    email = owner.account.email
    Client(REMOTE_ADDR="198.51.100.7").post(reverse("login"), {"username": email, "password": "wrong"})
    Client(REMOTE_ADDR="198.51.100.8").post(reverse("login"), {"username": email, "password": PASSWORD})
    assert events(owner) == [
        (Event.SIGN_IN_FAILED, email, "198.51.100.7"),
        (Event.SIGNED_IN, email, "198.51.100.8"),
    ]


def test_key_created_and_revoked_and_secret_rotated_are_recorded(owner: Persona) -> None:
    client = logged_in(owner)
    client.post(reverse("keys"), {"name": "CRM", "scope": "verify"})
    key = owner.account.api_keys.get(name="CRM")
    client.post(reverse("key-revoke", args=[key.pk]))
    client.post(reverse("signing-secret-rotate"))
    recorded = owner.account.audit_events.exclude(action=Event.SIGNED_IN).order_by("pk")
    assert [(e.action, e.detail) for e in recorded] == [
        (Event.KEY_CREATED, f"{key.prefix}… “CRM”, scope verify"),
        (Event.KEY_REVOKED, f"{key.prefix}… “CRM”"),
        (Event.SECRET_ROTATED, ""),
    ]
    assert {e.ip for e in recorded} == {"127.0.0.1"}


def test_role_changes_and_removals_are_recorded(owner: Persona) -> None:
    user = UserFactory()
    member = Membership.objects.create(account=owner.account, user=user, role=Role.VIEWER)
    client = logged_in(owner)
    client.post(reverse("member-role", args=[member.pk]), {"role": "developer"})
    client.post(reverse("member-remove", args=[member.pk]))
    recorded = owner.account.audit_events.exclude(action=Event.SIGNED_IN).order_by("pk")
    assert [(e.action, e.detail, e.who) for e in recorded] == [
        (Event.ROLE_CHANGED, f"{user.email}: viewer → developer", owner.account.email),
        (Event.MEMBER_REMOVED, f"{user.email} (developer); 0 key(s) revoked", owner.account.email),
    ]


def test_staff_plan_changes_and_grants_are_recorded(admin_client_: Client, owner: Persona, staff: Any) -> None:
    url = reverse("admin:accounts_account_change", args=[owner.account.pk])
    pro = owner.account.plan.__class__.objects.get(code="pro")
    admin_client_.post(url, {"plan": pro.pk})
    event = owner.account.audit_events.get(action=Event.PLAN_CHANGED)
    assert (event.who, event.detail) == (staff.email, "starter → pro")


def test_owners_and_admins_read_the_log_in_the_portal_others_do_not(owner: Persona, outsider: Persona) -> None:
    logged_in(owner).post(reverse("signing-secret-rotate"))
    page = logged_in(owner).get(reverse("audit")).content.decode()
    assert 'data-audit="secret_rotated"' in page
    assert 'data-audit="secret_rotated"' not in logged_in(outsider).get(reverse("audit")).content.decode()


def test_staff_see_the_log_in_the_admin(admin_client_: Client, owner: Persona) -> None:
    logged_in(owner).post(reverse("signing-secret-rotate"))
    page = admin_client_.get(reverse("admin:accounts_auditevent_changelist")).content.decode()
    assert "Signing secret rotated" in page and owner.account.email in page


def test_events_are_kept_a_year_then_pruned(owner: Persona) -> None:
    logged_in(owner).post(reverse("signing-secret-rotate"))
    with time_machine.travel(timezone.now() + timedelta(days=364)):
        prune_expired()
    assert owner.account.audit_events.filter(action=Event.SECRET_ROTATED).exists()
    with time_machine.travel(timezone.now() + timedelta(days=366)):
        prune_expired()
    assert not owner.account.audit_events.exists()
