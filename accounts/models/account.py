"""The account and who may act for it: its plan, the account itself, memberships with their roles,
invitations."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models
from django.utils import timezone

from lib import sql
from lib.tokens import random_base62

SIGNING_SECRET_PREFIX = "whsec_"
# Keep the previous secret signing alongside the new one this long after a rotation.
SECRET_ROTATION_OVERLAP = timedelta(hours=24)


def new_signing_secret() -> str:
    return SIGNING_SECRET_PREFIX + random_base62(32)


class Plan(models.Model):
    code = models.SlugField(max_length=20, unique=True)
    name = models.CharField(max_length=50)
    allows_bulk = models.BooleanField(default=False)
    requests_per_second = models.PositiveIntegerField()
    sort_order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["sort_order"]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    """A member's role in an account; what each may do is accounts/permissions.py's table."""

    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    DEVELOPER = "developer", "Developer"
    VIEWER = "viewer", "Viewer"


class AccountQuerySet(models.QuerySet["Account"]):
    def of_user(self, user: Any) -> AccountQuerySet:
        """The accounts `user` may act for: those it is a member of, whatever the role, that staff have
        not deactivated. Who may act
        for an account is decided here and only here (what each role may do: accounts/permissions.py)."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(memberships__user_id=user.pk, owner__is_active=True)

    def for_display(self) -> AccountQuerySet:
        return self.select_related(*Account.DISPLAY_RELATED)

    def person_join_sql(self, account_alias: str, person_alias: str) -> str:
        """SQL joining the person an account is known by (for hand-written reports, ops/business.py)."""
        user = sql.table(get_user_model())
        return f"JOIN {user} {person_alias} ON {person_alias}.id = {account_alias}.owner_id"


def membership_for(user: Any, chosen: str | None = None) -> Membership | None:
    """The membership `user` acts through: in the account `chosen` (a public id, the portal's header
    switch keeps it in the session) when `user` is its member, else in the oldest account it joined.
    None for a user who is no member (staff). The account, its plan and person are loaded."""
    if not user.is_authenticated:
        return None
    memberships = memberships_of(user.pk).select_related(
        "account", *(f"account__{related}" for related in Account.DISPLAY_RELATED)
    )
    if chosen:
        try:
            found = memberships.filter(account__public_id=uuid.UUID(chosen)).first()
        except ValueError:
            found = None
        if found is not None:
            return found
    return memberships.order_by("created_at", "pk").first()


def memberships_of(user_id: int) -> models.QuerySet[Membership]:
    """A user's memberships in the accounts it may act for (the header's switch lists these). A
    deactivated account (staff's action: its owner's login switched off) is no one's to act for."""
    return Membership.objects.filter(user_id=user_id, account__owner__is_active=True)


def account_for(user: Any, chosen: str | None = None) -> Account | None:
    """The account `user` acts for (see `membership_for`); None for a user with none (staff)."""
    membership = membership_for(user, chosen)
    return membership.account if membership else None


class Account(models.Model):
    # How an account is shown and found in lists elsewhere (admins, reports): by its owner's email.
    # Other apps use these names rather than "owner", so who an account's people are stays here.
    DISPLAY_RELATED = ("owner", "plan")
    EMAIL_LOOKUP = "owner__email"

    owner = models.OneToOneField(settings.AUTH_USER_MODEL, models.CASCADE, related_name="account")
    plan = models.ForeignKey(Plan, models.PROTECT, related_name="accounts")
    credit_balance = models.BigIntegerField(default=0)
    signing_secret = models.CharField(max_length=64, default=new_signing_secret)
    previous_signing_secret = models.CharField(max_length=64, blank=True)
    secret_rotated_at = models.DateTimeField(null=True, blank=True)
    # Where a verification asked again later announces its resolution when its request named no
    # callback_url (docs/api.md, "verification.resolved"). Set in the portal.
    callback_url = models.URLField(max_length=2000, blank=True)
    # Sign-up's free credits wait for this (the link mailed at sign-up); accounts opened by staff or
    # scripts are confirmed at once.
    email_confirmed_at = models.DateTimeField(null=True, blank=True)
    require_two_factor = models.BooleanField(
        default=False, help_text="Every member must have two-factor sign-in on to use the portal for it."
    )
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    # Days a new job's files are kept unless its upload says (docs/bulk.md, "Retention"); None: JOB_RETENTION_DAYS.
    job_retention_days = models.PositiveSmallIntegerField(null=True, blank=True)
    # Deep sessions leave only from egresses of this region (VERIFIER_SMTP_EGRESS `|region=`); `any`: all.
    probe_region = models.CharField(max_length=32, default="any")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AccountQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(credit_balance__gte=0), name="account_balance_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.email} ({self.plan.code})"

    @property
    def email(self) -> str:
        """The address the account is known by: its owner's."""
        return str(self.owner.email)

    def confirm_email(self) -> bool:
        """Mark the address confirmed: True for the one caller that did (a conditional UPDATE)."""
        now = timezone.now()
        won = Account.objects.filter(pk=self.pk, email_confirmed_at__isnull=True).update(email_confirmed_at=now)
        if won:
            self.email_confirmed_at = now
        return bool(won)

    def rotate_signing_secret(self) -> None:
        self.previous_signing_secret = self.signing_secret
        self.signing_secret = new_signing_secret()
        self.secret_rotated_at = timezone.now()
        self.save(update_fields=["signing_secret", "previous_signing_secret", "secret_rotated_at"])

    def active_signing_secrets(self) -> list[str]:
        """The current secret first, then the previous one while its overlap lasts."""
        secrets = [self.signing_secret]
        recent = self.secret_rotated_at and timezone.now() - self.secret_rotated_at < SECRET_ROTATION_OVERLAP
        if recent and self.previous_signing_secret:
            secrets.append(self.previous_signing_secret)
        return secrets


class Membership(models.Model):
    """A user's place in an account, with its role. An account has at least one owner."""

    account = models.ForeignKey(Account, models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["account", "user"], name="membership_once_per_account"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.account_id} ({self.role})"


# An invitation's link works this long, once.
INVITATION_VALIDITY = timedelta(days=7)


def _invitation_expiry() -> datetime:
    return timezone.now() + INVITATION_VALIDITY


class Invitation(models.Model):
    """An invitation by email to join an account with a role. Its link is signed (accounts/services.py)
    and works once, until `expires_at`; expired invitations are pruned (indexed `expires_at`)."""

    account = models.ForeignKey(Account, models.CASCADE, related_name="invitations")
    email = models.EmailField(max_length=150)
    role = models.CharField(max_length=10, choices=Role.choices)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(default=_invitation_expiry, db_index=True)
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.email} as {self.role} in {self.account_id}"

    @property
    def is_open(self) -> bool:
        return self.accepted_at is None and self.expires_at > timezone.now()

    def revoke(self) -> bool:
        """Close an open invitation (its link stops working at once): True if it was open."""
        now = timezone.now()
        return bool(Invitation.objects.filter(pk=self.pk, accepted_at__isnull=True).update(expires_at=now))

    def renew(self) -> bool:
        """Another 7 days for an open or expired, unused invitation (to send its link again)."""
        self.expires_at = _invitation_expiry()
        return bool(Invitation.objects.filter(pk=self.pk, accepted_at__isnull=True).update(expires_at=self.expires_at))

    def claim(self) -> bool:
        """Use the invitation up: True for the one caller that did (a conditional UPDATE)."""
        now = timezone.now()
        won = Invitation.objects.filter(pk=self.pk, accepted_at__isnull=True, expires_at__gt=now).update(
            accepted_at=now
        )
        return bool(won)
