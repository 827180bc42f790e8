"""Opening an account: a login, the account it owns (as its first owner member), and (for scripts)
its first API key.

Money is billing's: the opening balance is a ledger grant the caller makes in the same transaction
(`billing.services.credits_grant`), so an account's balance is its ledger's sum from the first row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from accounts.models import Account, ApiKey, Membership, Plan, Role
from accounts.plans import SIGNUP_PLAN
from lib.errors import DomainError


@dataclass(frozen=True)
class OpenedAccount:
    account: Account
    user: Any
    api_key: str | None


def account_open(*, email: str, password: str | None, plan_code: str = SIGNUP_PLAN, issue_key: bool) -> OpenedAccount:
    """Create the user (its username is the lowercased email), the account it owns, and a key if asked."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(username=email.lower(), email=email.lower(), password=password)
        account = Account.objects.create(owner=user, plan=Plan.objects.get(code=plan_code))
        Membership.objects.create(account=account, user=user, role=Role.OWNER)
        raw_key = ApiKey.issue(account=account, name="Default", created_by=user)[1] if issue_key else None
    return OpenedAccount(account=account, user=user, api_key=raw_key)


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
