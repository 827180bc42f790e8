"""Each role sees only what it can open (the permission table decides, accounts/permissions.py), the
only owner is offered nothing that cannot work, and pending invitations can be revoked or sent again."""

from __future__ import annotations

from django.core import mail
from django.urls import reverse

from accounts.models import Invitation, Role
from accounts.services import invitation_create, invitation_for_token
from tests.conftest import Persona
from tests.support.personas import joined, membership
from tests.support.portal import logged_in


def nav_of(page: str) -> str:
    return page.split('<ul class="nav-links">')[1].split("</ul>")[0]


def test_a_viewers_dashboard_offers_neither_verifying_nor_uploading(owner: Persona) -> None:
    _, client = joined(owner, Role.VIEWER)
    page = client.get(reverse("dashboard")).content.decode()
    assert f'href="{reverse("verify")}"' not in page and f'href="{reverse("job-new")}"' not in page
    assert f'href="{reverse("billing")}"' not in page


def test_an_owners_dashboard_offers_verifying_and_uploading(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("dashboard")).content.decode()
    assert 'data-action="verify"' in page and 'data-action="upload"' in page


def test_a_developers_403_page_shows_only_the_links_its_role_may_follow(owner: Persona) -> None:
    _, client = joined(owner, Role.DEVELOPER)
    response = client.get(reverse("members"))
    nav = nav_of(response.content.decode())
    assert response.status_code == 403 and f'href="{reverse("keys")}"' in nav
    for name in ("members", "audit", "billing"):
        assert f'href="{reverse(name)}"' not in nav, name


def test_the_only_owner_is_offered_no_role_change_and_no_leave(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("members")).content.decode()
    me = membership(owner, owner.account.owner)
    assert "data-sole-owner" in page and f'id="role-{me.pk}"' not in page
    assert reverse("member-remove", args=[me.pk]) not in page


def test_with_a_second_owner_each_owner_may_change_role_and_leave(owner: Persona) -> None:
    joined(owner, Role.OWNER)
    page = logged_in(owner).get(reverse("members")).content.decode()
    me = membership(owner, owner.account.owner)
    assert "data-sole-owner" not in page and f'id="role-{me.pk}"' in page and ">Leave<" in page


def invited(owner: Persona) -> tuple[Invitation, str]:
    return invitation_create(
        account=owner.account,
        email="new@company.example.com",
        role=Role.VIEWER,
        by=membership(owner, owner.account.owner),
    )


def test_a_revoked_invitation_link_no_longer_works(owner: Persona) -> None:
    invitation, token = invited(owner)
    client = logged_in(owner)
    assert 'data-invitation="new@company.example.com"' in client.get(reverse("members")).content.decode()
    client.post(reverse("invitation-revoke", args=[invitation.pk]))
    assert invitation_for_token(token) is None
    assert 'data-invitation="new@company.example.com"' not in client.get(reverse("members")).content.decode()
    assert client.get(reverse("invitation", args=[token])).status_code == 404


def test_an_invitation_sent_again_mails_a_working_link_for_seven_more_days(owner: Persona) -> None:
    invitation, _ = invited(owner)
    before = invitation.expires_at
    logged_in(owner).post(reverse("invitation-resend", args=[invitation.pk]))
    [message] = mail.outbox
    token = message.body.split("/invitations/")[1].split()[0]
    assert message.to == ["new@company.example.com"] and invitation_for_token(token) == invitation
    invitation.refresh_from_db()
    assert invitation.expires_at >= before


def test_an_outsider_cannot_revoke_or_resend_anothers_invitation(owner: Persona, outsider: Persona) -> None:
    invitation, token = invited(owner)
    client = logged_in(outsider)
    assert client.post(reverse("invitation-revoke", args=[invitation.pk])).status_code == 404
    assert client.post(reverse("invitation-resend", args=[invitation.pk])).status_code == 404
    assert invitation_for_token(token) == invitation and mail.outbox == []
