from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models
from django.utils import timezone

from lib import sql
from lib.tokens import random_base62, sha256_hex

API_KEY_PREFIX = "ev_live_"
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


class AccountQuerySet(models.QuerySet["Account"]):
    def of_user(self, user: Any) -> AccountQuerySet:
        """The accounts `user` may act for. Who may act for an account is decided here and only here
        (today: the one user who owns it; members with roles will join this lookup)."""
        return self.filter(owner_id=user.pk) if user.is_authenticated else self.none()

    def for_display(self) -> AccountQuerySet:
        return self.select_related(*Account.DISPLAY_RELATED)

    def person_join_sql(self, account_alias: str, person_alias: str) -> str:
        """SQL joining the person an account is known by (for hand-written reports, ops/business.py)."""
        user = sql.table(get_user_model())
        return f"JOIN {user} {person_alias} ON {person_alias}.id = {account_alias}.owner_id"


def account_for(user: Any) -> Account | None:
    """The account `user` acts for, its plan and person loaded; None for a user with none (staff)."""
    return Account.objects.of_user(user).for_display().first()


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


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def active(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)

    def find(self, raw_key: str) -> ApiKey | None:
        """The active key with this value, its account and plan loaded: one statement.

        A key is active while it is not revoked and its account's owner may log in: staff who
        deactivate a user (the admin's "active" box) stop that account's keys at once too.
        On every API request, so hand-written (see lib/sql.py). The instances carry only the
        columns the API reads; any other field loads on first access, as with `.only()`.
        """
        row = sql.fetch_one(
            f"SELECT k.id, k.last_used_at, a.id, a.credit_balance, p.id, p.code, p.allows_bulk,"
            f" p.requests_per_second FROM {sql.table(ApiKey)} k"
            f" JOIN {sql.table(Account)} a ON a.id = k.account_id JOIN {sql.table(Plan)} p ON p.id = a.plan_id"
            f" JOIN {sql.table(get_user_model())} u ON u.id = a.owner_id"
            f" WHERE k.key_hash = %s AND k.revoked_at IS NULL AND u.is_active",
            [sha256_hex(raw_key)],
        )
        if row is None:
            return None
        key_id, last_used_at, account_id, balance, plan_id, code, allows_bulk, rate = row
        db = self.db
        plan = Plan.from_db(
            db, ["id", "code", "allows_bulk", "requests_per_second"], [plan_id, code, allows_bulk, rate]
        )
        account = Account.from_db(db, ["id", "plan_id", "credit_balance"], [account_id, plan_id, balance])
        key = ApiKey.from_db(
            db,
            ["id", "account_id", "last_used_at", "revoked_at"],
            [key_id, account_id, last_used_at and sql.aware(last_used_at), None],
        )
        account.plan, key.account = plan, account
        return key


class ApiKey(models.Model):
    account = models.ForeignKey(Account, models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, default="Default")
    prefix = models.CharField(max_length=12, help_text="First 12 characters, for recognising the key.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"

    @classmethod
    def issue(cls, *, account: Account, name: str = "Default") -> tuple[ApiKey, str]:
        """Create a key; the raw key is returned here and never stored or shown again."""
        raw = API_KEY_PREFIX + random_base62(32)
        key = cls.objects.create(account=account, name=name, prefix=raw[:12], key_hash=sha256_hex(raw))
        return key, raw

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
