"""Opening an account: a login, the account it owns (as its first owner member), and (for scripts)
its first API keys, a live one and a test one.

Money is billing's: the opening balance is a ledger grant the caller makes in the same transaction
(`billing.services.credits_grant`), so an account's balance is its ledger's sum from the first row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from accounts.models import INVITATION_VALIDITY, Account, ApiKey, Invitation, KeyMode, Membership, Plan, Role
from accounts.plans import SIGNUP_PLAN
from lib.errors import DomainError
from lib.signing import short_token, short_token_value


@dataclass(frozen=True)
class OpenedAccount:
    account: Account
    user: Any
    api_key: str | None
    test_api_key: str | None = None


def account_open(
    *, email: str, password: str | None, plan_code: str = SIGNUP_PLAN, issue_key: bool, confirmed: bool = True
) -> OpenedAccount:
    """Create the user (its username is the lowercased email), the account it owns, and a key if asked.
    `confirmed=False` (portal sign-up) leaves the address to be confirmed by the mailed link."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(username=email.lower(), email=email.lower(), password=password)
        account = Account.objects.create(
            owner=user, plan=Plan.objects.get(code=plan_code), email_confirmed_at=timezone.now() if confirmed else None
        )
        Membership.objects.create(account=account, user=user, role=Role.OWNER)
        raw_key = ApiKey.issue(account=account, name="Default", created_by=user)[1] if issue_key else None
        test_key = (
            ApiKey.issue(account=account, name="Test", created_by=user, key_mode=KeyMode.TEST)[1] if issue_key else None
        )
    return OpenedAccount(account=account, user=user, api_key=raw_key, test_api_key=test_key)


class MemberChangeRefused(DomainError):
    """A role change or removal that would leave the account without an owner, or that the acting
    member's own role does not allow (only owners give or take the owner role)."""


def member_role_change(*, membership: Membership, role: Role, by: Membership) -> None:
    """Give `membership` another role, as the member `by` (an owner or admin of the same account)."""
    with transaction.atomic():
        _check_may_change(membership=membership, by=by, new_role=role)
        membership.role = role
        membership.save(update_fields=["role"])


def member_remove(*, membership: Membership, by: Membership) -> int:
    """Take `membership` out of its account, as the member `by`; the keys it created are revoked (they
    would stop anyway: ApiKeyQuerySet.find wants their creator to be a member). Returns how many."""
    with transaction.atomic():
        _check_may_change(membership=membership, by=by, new_role=None)
        membership.delete()
        keys = ApiKey.objects.active().filter(account_id=membership.account_id, created_by_id=membership.user_id)
        return keys.update(revoked_at=timezone.now())


def _check_may_change(*, membership: Membership, by: Membership, new_role: Role | None) -> None:
    # Locks the account's owners, so two owners demoting each other at once cannot leave none.
    owners = list(
        Membership.objects.select_for_update().filter(account_id=membership.account_id, role=Role.OWNER).order_by("pk")
    )
    touches_owner = Role.OWNER in (membership.role, new_role)
    if touches_owner and by.role != Role.OWNER:
        raise MemberChangeRefused("Only an owner can give or take the owner role.")
    if membership.role == Role.OWNER and new_role != Role.OWNER and [o.pk for o in owners] == [membership.pk]:
        raise MemberChangeRefused("An account needs an owner: make another member an owner first.")


class InvitationRefused(DomainError):
    """An invitation that cannot be made or used."""


_INVITATION_SALT = "accounts.invitation"


def invitation_create(*, account: Account, email: str, role: Role, by: Membership) -> tuple[Invitation, str]:
    """Invite `email` to `account` with `role`, as the member `by`; returns it and its link's signed token."""
    email = email.strip().lower()
    if role == Role.OWNER and by.role != Role.OWNER:
        raise InvitationRefused("Only an owner can invite an owner.", "role")
    if account.memberships.filter(user__username=email).exists():
        raise InvitationRefused(f"{email} is already a member of this account.", "email")
    invitation = Invitation.objects.create(account=account, email=email, role=role, invited_by_id=by.user_id)
    return invitation, short_token(_INVITATION_SALT, str(invitation.pk))


def invitation_renew(*, invitation: Invitation) -> str | None:
    """Another 7 days for an unused invitation, and a fresh link's token to send again; None once used."""
    return short_token(_INVITATION_SALT, str(invitation.pk)) if invitation.renew() else None


def invitation_for_token(token: str) -> Invitation | None:
    """The open invitation a link's token names; None for a forged, expired or used one."""
    pk = short_token_value(_INVITATION_SALT, token, max_age=INVITATION_VALIDITY)
    if pk is None or not pk.isdigit():
        return None
    invitation = Invitation.objects.select_related("account__owner").filter(pk=pk).first()
    return invitation if invitation is not None and invitation.is_open else None


def invitation_accept(*, invitation: Invitation, user: Any) -> Membership:
    """Make `user` a member with the invitation's role, using the invitation up (once: a second use,
    or one racing this one, is refused). Someone already a member keeps the role they have."""
    with transaction.atomic():
        if not invitation.claim():
            raise InvitationRefused("This invitation has already been used or has expired.")
        membership, _ = Membership.objects.get_or_create(
            account=invitation.account, user=user, defaults={"role": invitation.role}
        )
    return membership


def invitation_accept_as_new_user(*, invitation: Invitation, password: str) -> Membership:
    """Open a login for the invited address (no account of its own) and accept with it."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(
            username=invitation.email, email=invitation.email, password=password
        )
        return invitation_accept(invitation=invitation, user=user)
