"""Writing the audit log from where we know who acts and from which address: portal views, API
views, the admin and the sign-in signals. What is recorded and how long: docs/portal.md, "Audit log"."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.http import HttpRequest

from accounts.models import Account, ApiKey, AuditEvent, Membership
from lib.client_address import client_address

Event = AuditEvent.Action


def audit(
    request: Any,
    account: Account | int,
    action: AuditEvent.Action,
    detail: str = "",
    *,
    key: ApiKey | None = None,
    by: str = "",
) -> None:
    """Record `action` on `account`, done by `key` (an API request) or else the request's signed-in
    user; with neither, `by` names who did it (a member's address, or `auto-recharge`, `plan renewal`)."""
    user = None if key is not None else _signed_in(request)
    AuditEvent.objects.create(
        account_id=account if isinstance(account, int) else account.pk,
        action=action,
        actor=user,
        actor_email=getattr(user, "email", "") or by,
        key_prefix=key.prefix if key is not None else "",
        ip=client_ip(request),
        detail=detail[:300],
    )


def client_ip(request: Any) -> str | None:
    return client_address(request) or None


def _signed_in(request: Any) -> Any:
    user = getattr(request, "user", None)
    return user if isinstance(user, get_user_model()) and user.is_authenticated else None


def on_signed_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    for account_id in Membership.objects.filter(user_id=user.pk).values_list("account_id", flat=True):
        AuditEvent.objects.create(
            account_id=account_id, action=Event.SIGNED_IN, actor=user, actor_email=user.email, ip=client_ip(request)
        )


def on_sign_in_failed(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    """A wrong password for a member's address is recorded in each of its accounts (unknown addresses
    belong to no account: the throttle is what stops guessing)."""
    username = str(credentials.get("username", "")).strip().lower()
    sign_in_failed(request, Membership.objects.filter(user__username=username), "wrong password")


def sign_in_failed(request: HttpRequest | None, memberships: Any, detail: str) -> None:
    """A failed sign-in of a member, recorded in each of its accounts: a wrong password, or a wrong two-factor code."""
    for membership in memberships.select_related("user"):
        AuditEvent.objects.create(
            account_id=membership.account_id,
            action=Event.SIGN_IN_FAILED,
            actor=membership.user,
            actor_email=membership.user.email,
            ip=client_ip(request),
            detail=detail,
        )
