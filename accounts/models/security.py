"""Security records of an account: attempt windows (the log-in throttle's count, shared by other throttles)
and the audit log."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.models.account import Account
from lib import sql
from lib.tokens import sha256_hex


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

    def attempt_wait(self, *, scope: str, key: str, limit: int, window_seconds: int, now: float) -> float | None:
        """Count one attempt of `scope` for `key` (an address, an email): None while at most `limit`
        were made in the window, else the seconds until it closes. The log-in throttle counts here, and
        so does any other throttle that needs an exact count without Redis (a publishable key's per
        end-user address: apikit/key_throttle.py)."""
        pair = sha256_hex(f"{scope}|{key.strip().lower()}")
        if self.count_attempt(pair=pair, now=now, window_seconds=window_seconds) <= limit:
            return None
        ends = self.filter(pair=pair).values_list("window_ends", flat=True).first()
        return max(1.0, (ends or now + window_seconds) - now)


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
        KEY_CHANGED = "key_changed", "API key changed"
        SECRET_ROTATED = "secret_rotated", "Signing secret rotated"
        MEMBER_INVITED = "member_invited", "Member invited"
        MEMBER_JOINED = "member_joined", "Member joined"
        MEMBER_REMOVED = "member_removed", "Member removed"
        ROLE_CHANGED = "role_changed", "Role changed"
        PLAN_CHANGED = "plan_changed", "Plan changed"
        CREDITS_GRANTED = "credits_granted", "Credits granted"
        JOB_DELETED = "job_deleted", "Job deleted"
        TWO_FACTOR_CHANGED = "2fa_changed", "Two-factor sign-in changed"
        FEEDBACK_URLS_ROTATED = "feedback_rotated", "Feedback webhook URLs rotated"
        MAILGUN_KEY_CHANGED = "mailgun_key_changed", "Feedback webhook keys changed"
        ADDRESSES_ERASED = "addresses_erased", "Addresses erased"
        EXPORT_REQUESTED = "export_requested", "Account data export asked for"

    account = models.ForeignKey(Account, models.CASCADE, related_name="audit_events")
    action = models.CharField(max_length=20, choices=Action.choices)
    # Who: a person (kept by email too, should the user go) or an API key (by its prefix); for what
    # no one did by hand, what did it, in actor_email: "auto-recharge", "plan renewal".
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    actor_email = models.CharField(max_length=254, blank=True)
    key_prefix = models.CharField(max_length=16, blank=True)
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
