"""Members and roles: the account is the team's, members switch between accounts, owners and admins
change roles and remove members, and the last owner cannot leave."""

from __future__ import annotations

from django.urls import reverse

from accounts.models import ApiKey, Membership, Role
from tests.conftest import Persona
from tests.support.personas import joined, membership
from tests.support.portal import logged_in


def test_a_developer_sees_the_accounts_keys_whoever_made_them(owner: Persona) -> None:
    _, client = joined(owner, Role.DEVELOPER)
    page = client.get(reverse("keys")).content.decode()
    assert owner.account.api_keys.get().prefix in page


def test_a_viewer_sees_only_the_links_its_role_may_follow(owner: Persona) -> None:
    _, client = joined(owner, Role.VIEWER)
    page = client.get(reverse("dashboard")).content.decode()
    nav = page.split('<ul class="nav-links">')[1].split("</ul>")[0]
    assert f'href="{reverse("jobs")}"' in nav
    assert f'href="{reverse("keys")}"' not in nav and f'href="{reverse("billing")}"' not in nav


def test_a_user_in_two_accounts_acts_for_the_first_it_joined_and_switches_from_the_header(
    owner: Persona, outsider: Persona
) -> None:
    user, client = joined(owner, Role.ADMIN)
    joined(outsider, Role.VIEWER, user)
    page = client.get(reverse("dashboard")).content.decode()
    assert "data-account-switch" in page and owner.account.email in page
    assert client.get(reverse("keys")).status_code == 200  # admin of the owner's account
    response = client.post(reverse("account-switch"), {"account": str(outsider.account.public_id)})
    assert response.status_code == 302
    assert client.get(reverse("keys")).status_code == 403  # now a viewer of the outsider's
    assert outsider.account.email in client.get(reverse("dashboard")).content.decode()


def test_the_header_switch_leaves_out_an_account_staff_deactivated(owner: Persona, outsider: Persona) -> None:
    user, client = joined(owner, Role.ADMIN)
    joined(outsider, Role.VIEWER, user)
    outsider.account.owner.is_active = False  # staff deactivate it (the account admin's action)
    outsider.account.owner.save(update_fields=["is_active"])
    page = client.get(reverse("dashboard")).content.decode()
    assert "data-account-switch" not in page and outsider.account.email not in page  # one account left: no switch
    response = client.post(reverse("account-switch"), {"account": str(outsider.account.public_id)})
    assert response.status_code == 404


def test_switching_to_an_account_one_is_no_member_of_is_404_and_changes_nothing(
    owner: Persona, outsider: Persona
) -> None:
    _, client = joined(owner, Role.DEVELOPER)
    response = client.post(reverse("account-switch"), {"account": str(outsider.account.public_id)})
    assert response.status_code == 404
    assert owner.account.api_keys.get().prefix in client.get(reverse("keys")).content.decode()


def test_an_owner_changes_a_members_role(owner: Persona) -> None:
    user, _ = joined(owner, Role.VIEWER)
    client = logged_in(owner)
    client.post(reverse("member-role", args=[membership(owner, user).pk]), {"role": "developer"})
    assert membership(owner, user).role == Role.DEVELOPER


def test_an_admin_cannot_give_the_owner_role(owner: Persona) -> None:
    _, admin = joined(owner, Role.ADMIN)
    viewer, _ = joined(owner, Role.VIEWER)
    response = admin.post(reverse("member-role", args=[membership(owner, viewer).pk]), {"role": "owner"}, follow=True)
    assert "Only an owner can give or take the owner role." in response.content.decode()
    assert membership(owner, viewer).role == Role.VIEWER


def test_an_unknown_role_changes_nothing(owner: Persona) -> None:
    viewer, _ = joined(owner, Role.VIEWER)
    client = logged_in(owner)
    client.post(reverse("member-role", args=[membership(owner, viewer).pk]), {"role": "superuser"})
    assert membership(owner, viewer).role == Role.VIEWER


def test_the_last_owner_can_neither_leave_nor_step_down(owner: Persona) -> None:
    client = logged_in(owner)
    mine = membership(owner, owner.account.owner)
    left = client.post(reverse("member-remove", args=[mine.pk]), follow=True).content.decode()
    client.post(reverse("member-role", args=[mine.pk]), {"role": "admin"})
    assert "An account needs an owner" in left
    assert membership(owner, owner.account.owner).role == Role.OWNER


def test_an_owner_may_leave_once_another_owner_is_there(owner: Persona) -> None:
    joined(owner, Role.OWNER)
    client = logged_in(owner)
    client.post(reverse("member-remove", args=[membership(owner, owner.account.owner).pk]))
    assert not Membership.objects.filter(account=owner.account, user=owner.account.owner).exists()
    assert client.get(reverse("dashboard")).status_code == 404  # no account left to act for


def test_a_removed_members_keys_stop_at_once_and_the_account_keeps_its_own(owner: Persona) -> None:
    developer, _ = joined(owner, Role.DEVELOPER)
    raw = ApiKey.issue(account=owner.account, created_by=developer)[1]
    assert owner.post_json("/v1/verify", {"email": "a@good.com"}, Authorization=f"Bearer {raw}").status_code == 200
    client = logged_in(owner)
    client.post(reverse("member-remove", args=[membership(owner, developer).pk]))
    refused = owner.post_json("/v1/verify", {"email": "a@good.com"}, Authorization=f"Bearer {raw}")
    assert (refused.status_code, refused.json()["error"]["code"]) == (401, "invalid_api_key")
    assert owner.verify("a@good.com").status_code == 200  # the owner's key is untouched


def test_a_deactivated_members_keys_stop_at_once(owner: Persona) -> None:
    developer, _ = joined(owner, Role.DEVELOPER)
    raw = ApiKey.issue(account=owner.account, created_by=developer)[1]
    developer.is_active = False
    developer.save(update_fields=["is_active"])
    refused = owner.post_json("/v1/verify", {"email": "a@good.com"}, Authorization=f"Bearer {raw}")
    assert refused.status_code == 401


def test_a_members_keys_stop_at_once_when_the_accounts_owner_is_deactivated(owner: Persona) -> None:
    developer, _ = joined(owner, Role.DEVELOPER)
    raw = ApiKey.issue(account=owner.account, created_by=developer)[1]
    assert owner.post_json("/v1/verify", {"email": "a@good.com"}, Authorization=f"Bearer {raw}").status_code == 200
    owner.account.owner.is_active = False
    owner.account.owner.save(update_fields=["is_active"])
    refused = owner.post_json("/v1/verify", {"email": "a@good.com"}, Authorization=f"Bearer {raw}")
    assert refused.status_code == 401


def test_the_members_page_lists_everyone_with_their_role(owner: Persona) -> None:
    viewer, _ = joined(owner, Role.VIEWER)
    client = logged_in(owner)
    page = client.get(reverse("members")).content.decode()
    assert f'data-member="{viewer.email}"' in page and f'data-member="{owner.account.email}"' in page


def test_members_of_a_deactivated_account_can_no_longer_act_for_it(owner: Persona) -> None:
    _, client = joined(owner, Role.ADMIN)
    owner.account.owner.is_active = False
    owner.account.owner.save(update_fields=["is_active"])
    assert client.get(reverse("dashboard")).status_code == 404


def test_a_member_of_a_deactivated_account_and_an_active_one_acts_for_the_active_one(
    owner: Persona, outsider: Persona
) -> None:
    user, client = joined(owner, Role.ADMIN)
    joined(outsider, Role.VIEWER, user)
    owner.account.owner.is_active = False
    owner.account.owner.save(update_fields=["is_active"])
    # A viewer of the outsider's account (the admin role was the deactivated account's).
    assert client.get(reverse("dashboard")).status_code == 200
    assert client.get(reverse("keys")).status_code == 403
