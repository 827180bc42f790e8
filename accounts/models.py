from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models
from django.utils import timezone

from lib import sql
from lib.tokens import random_base62, sha256_hex

API_KEY_PREFIX = "ev_live_"
TEST_KEY_PREFIX = "ev_test_"
SIGNING_SECRET_PREFIX = "whsec_"
# Keep the previous secret signing alongside the new one this long after a rotation.
SECRET_ROTATION_OVERLAP = timedelta(hours=24)
# last_used_at is for people, not for accounting: one write a minute per key is plenty.
LAST_USED_RESOLUTION = timedelta(seconds=60)


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
    # Sign-up's free credits wait for this (the link mailed at sign-up); accounts opened by staff or
    # scripts are confirmed at once.
    email_confirmed_at = models.DateTimeField(null=True, blank=True)
    require_two_factor = models.BooleanField(
        default=False, help_text="Every member must have two-factor sign-in on to use the portal for it."
    )
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
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


class KeyMode(models.TextChoices):
    """Live keys work for real; test keys answer from the sandbox (README, "Test keys"). A key and
    each job carry their key mode, and a key only ever sees what was made in its own. (Fast/deep
    is another word: verification.engine.modes.ValidationMode.)"""

    LIVE = "live"
    TEST = "test"


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

    def claim(self) -> bool:
        """Use the invitation up: True for the one caller that did (a conditional UPDATE)."""
        now = timezone.now()
        won = Invitation.objects.filter(pk=self.pk, accepted_at__isnull=True, expires_at__gt=now).update(
            accepted_at=now
        )
        return bool(won)


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def active(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)

    def find(self, raw_key: str) -> ApiKey | None:
        """The active key with this value, its account and plan loaded: one statement.

        A key is active while it is not revoked, its account's owner may log in (staff who
        deactivate the account stop its keys at once), and the member who created it is still a
        member of the account and may log in (a removed member's keys stop at once). The creator's
        role comes along: a key never does more than its creator's role allows (accounts/permissions.py).
        On every API request, so hand-written (see lib/sql.py). The instances carry only the
        columns the API reads; any other field loads on first access, as with `.only()`.
        """
        row = sql.fetch_one(
            f"SELECT k.id, k.last_used_at, k.scope, k.expires_at, k.allowed_ips, m.role, k.key_mode,"
            f" a.id, a.credit_balance, p.id, p.code, p.allows_bulk, p.requests_per_second FROM {sql.table(ApiKey)} k"
            f" JOIN {sql.table(Account)} a ON a.id = k.account_id JOIN {sql.table(Plan)} p ON p.id = a.plan_id"
            f" JOIN {sql.table(get_user_model())} u ON u.id = a.owner_id"
            f" JOIN {sql.table(Membership)} m ON m.account_id = k.account_id AND m.user_id = k.created_by_id"
            f" JOIN {sql.table(get_user_model())} c ON c.id = k.created_by_id"
            f" WHERE k.key_hash = %s AND k.revoked_at IS NULL AND u.is_active AND c.is_active",
            [sha256_hex(raw_key)],
        )
        if row is None:
            return None
        key_id, last_used_at, scope, expires_at, allowed_ips, role, key_mode = row[:7]
        account_id, balance, plan_id, code, allows_bulk, rate = row[7:]
        db = self.db
        plan = Plan.from_db(
            db, ["id", "code", "allows_bulk", "requests_per_second"], [plan_id, code, allows_bulk, rate]
        )
        account = Account.from_db(db, ["id", "plan_id", "credit_balance"], [account_id, plan_id, balance])
        key = ApiKey.from_db(
            db,
            # from_db takes the values in the model's field order
            ["id", "account_id", "scope", "expires_at", "allowed_ips", "key_mode", "last_used_at", "revoked_at"],
            [key_id, account_id, scope, expires_at and sql.aware(expires_at), allowed_ips, key_mode]
            + [last_used_at and sql.aware(last_used_at), None],
        )
        account.plan, key.account, key.creator_role = plan, account, role
        return key


class ApiKey(models.Model):
    class Scope(models.TextChoices):
        FULL = "full", "Full: everything the API does"
        VERIFY = "verify", "Verify: single and bulk verification only"
        READ = "read", "Read: GET requests only"

    account = models.ForeignKey(Account, models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, default="Default")
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.FULL)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Refused from then on (none: never).")
    allowed_ips = models.TextField(
        blank=True, help_text="Addresses or networks (CIDR) it may be used from, one a line; empty: anywhere."
    )
    # The key belongs to the account; who made it decides how long it works (a removed member's stop).
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    prefix = models.CharField(max_length=12, help_text="First 12 characters, for recognising the key.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    key_mode = models.CharField(
        max_length=4, choices=KeyMode.choices, default=KeyMode.LIVE, db_default=KeyMode.LIVE, editable=False
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"

    # What ApiKeyQuerySet.find loads with the key: the role of the member who created it.
    creator_role: str | None = None

    @classmethod
    def issue(
        cls,
        *,
        account: Account,
        name: str = "Default",
        created_by: Any = None,
        key_mode: str = KeyMode.LIVE,
        **limits: Any,
    ) -> tuple[ApiKey, str]:
        """Create a key (by its account's owner unless `created_by` says who; `limits`: scope,
        expires_at, allowed_ips); the raw key is returned here and never stored or shown again."""
        raw = (TEST_KEY_PREFIX if key_mode == KeyMode.TEST else API_KEY_PREFIX) + random_base62(32)
        creator_id = created_by.pk if created_by is not None else account.owner_id
        key = cls.objects.create(
            account=account,
            name=name,
            prefix=raw[:12],
            key_hash=sha256_hex(raw),
            created_by_id=creator_id,
            key_mode=key_mode,
            **limits,
        )
        return key, raw

    def allowed_networks(self) -> list[IPv4Network | IPv6Network]:
        return [ip_network(line.strip(), strict=False) for line in self.allowed_ips.splitlines() if line.strip()]

    def is_expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    def allows_address(self, address: str) -> bool:
        networks = self.allowed_networks()
        if not networks:
            return True
        try:
            ip = ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in networks)

    @property
    def is_live(self) -> bool:
        return self.key_mode == KeyMode.LIVE

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def revoke(self) -> None:
        ApiKey.objects.filter(pk=self.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.refresh_from_db(fields=["revoked_at"])

    def touch(self) -> None:
        now = timezone.now()
        if self.last_used_at is not None and now - self.last_used_at < LAST_USED_RESOLUTION:
            return  # fresh enough: spare the hot path a write
        stale = models.Q(last_used_at__isnull=True) | models.Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
        ApiKey.objects.filter(stale, pk=self.pk).update(last_used_at=now)


class RateWindowQuerySet(models.QuerySet["RateWindow"]):
    def hit(self, *, key_id: int, second: int) -> int:
        """Count a request in the key's window for `second`; returns the window's count so far.

        One atomic statement (see lib/sql.py): a new second starts the count again at 1.
        """
        table = sql.table(RateWindow)
        row = sql.fetch_one(
            f"INSERT INTO {table} (key_id, window_second, hits) VALUES (%s, %s, 1)"
            f" ON CONFLICT (key_id) DO UPDATE SET"
            f" hits = CASE WHEN {table}.window_second = excluded.window_second THEN {table}.hits + 1 ELSE 1 END,"
            f" window_second = excluded.window_second"
            f" RETURNING hits",
            [key_id, second],
        )
        assert row is not None
        return int(row[0])


class RateWindow(models.Model):
    """Requests of one API key in its latest one-second window, where there is no Redis to count in."""

    key = models.OneToOneField(ApiKey, models.CASCADE, primary_key=True, related_name="+")
    window_second = models.BigIntegerField(help_text="Unix time of the window's second.")
    hits = models.PositiveIntegerField()

    objects = RateWindowQuerySet.as_manager()

    def __str__(self) -> str:
        return f"key {self.key_id}: {self.hits} in {self.window_second}"


class LoginWindowQuerySet(models.QuerySet["LoginWindow"]):
    def count_attempt(self, *, pair: str, now: float, window_seconds: int) -> int:
        """Count a log-in attempt for `pair`; returns the attempts so far in its window.

        One atomic statement (see lib/sql.py), so parallel attempts each get their own number:
        a window that has closed starts again at 1. Closed windows are deleted on the way.
        """
        table = sql.table(LoginWindow)
        sql.execute(f"DELETE FROM {table} WHERE window_ends <= %s", [now])
        row = sql.fetch_one(
            f"INSERT INTO {table} (pair, window_ends, attempts) VALUES (%s, %s, 1)"
            f" ON CONFLICT (pair) DO UPDATE SET"
            f" attempts = CASE WHEN {table}.window_ends > %s THEN {table}.attempts + 1 ELSE 1 END,"
            f" window_ends = CASE WHEN {table}.window_ends > %s THEN {table}.window_ends"
            f" ELSE excluded.window_ends END"
            f" RETURNING attempts",
            [pair, now + window_seconds, now, now],
        )
        assert row is not None
        return int(row[0])


class LoginWindow(models.Model):
    """Log-in attempts for one username from one address, counted before the password is checked."""

    pair = models.CharField(max_length=64, primary_key=True, help_text="sha256 of username and address.")
    window_ends = models.FloatField(db_index=True, help_text="Unix time the window closes.")
    attempts = models.PositiveIntegerField()

    objects = LoginWindowQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.attempts} attempts until {self.window_ends}"


# An account's audit log is kept this long, then pruned (lib/prune.py, by the indexed expires_at).
AUDIT_RETENTION = timedelta(days=365)


def _audit_expiry() -> datetime:
    return timezone.now() + AUDIT_RETENTION


class AuditEvent(models.Model):
    """Something done to or for an account that its owners should be able to look up: who, when, from
    which address, what. Written by the HTTP layer (accounts/auditing.py), which knows who acts."""

    class Action(models.TextChoices):
        SIGNED_IN = "signed_in", "Signed in"
        SIGN_IN_FAILED = "sign_in_failed", "Sign-in failed"
        KEY_CREATED = "key_created", "API key created"
        KEY_REVOKED = "key_revoked", "API key revoked"
        SECRET_ROTATED = "secret_rotated", "Signing secret rotated"
        MEMBER_INVITED = "member_invited", "Member invited"
        MEMBER_JOINED = "member_joined", "Member joined"
        MEMBER_REMOVED = "member_removed", "Member removed"
        ROLE_CHANGED = "role_changed", "Role changed"
        PLAN_CHANGED = "plan_changed", "Plan changed"
        CREDITS_GRANTED = "credits_granted", "Credits granted"
        JOB_DELETED = "job_deleted", "Job deleted"
        TWO_FACTOR_CHANGED = "2fa_changed", "Two-factor sign-in changed"

    account = models.ForeignKey(Account, models.CASCADE, related_name="audit_events")
    action = models.CharField(max_length=20, choices=Action.choices)
    # Who: a person (kept by email too, should the user go) or an API key (by its prefix).
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    actor_email = models.CharField(max_length=254, blank=True)
    key_prefix = models.CharField(max_length=12, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    detail = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(default=_audit_expiry, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["account", "-created_at"], name="audit_account_newest")]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action} by {self.who}"

    @property
    def who(self) -> str:
        if self.key_prefix:
            return f"API key {self.key_prefix}…"
        return self.actor_email or "staff"
