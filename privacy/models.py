"""What staff did for a data subject (docs/privacy.md, "Erasure for a person"), and the exports owners ask for."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from lib.tokens import random_base62


class PersonErasure(models.Model):
    """A person's address erased by staff from every account and the shared stores: who, when, why
    and how much went. Never the address: its HMAC (lib/address_keys.py) says which, to whoever
    holds the address."""

    address_key = models.CharField(max_length=64, editable=False)
    reason = models.CharField(max_length=500, help_text="Why, e.g. the person's request and its reference.")
    erased_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+", editable=False
    )
    # Kept by email too, should the staff member's user go.
    erased_by_email = models.CharField(max_length=254, blank=True, editable=False)
    erased = models.JSONField(default=dict, editable=False, help_text="How many went, by store.")
    erased_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-erased_at", "-pk"]

    def __str__(self) -> str:
        return f"erasure of {self.address_key[:12]}… by {self.erased_by_email or 'staff'}"


# A finished export's ZIP can be downloaded this long (its mailed link too); then the file goes.
EXPORT_LINK_VALIDITY = timedelta(hours=24)
# The export's row (its status, counts and times, no data) stays this long after it was asked for, then is pruned.
EXPORT_KEPT = timedelta(days=30)
EXPORT_ID_PATTERN = "exp_[0-9A-Za-z]{24}"


def new_export_id() -> str:
    return "exp_" + random_base62(24)


def _export_row_expiry() -> datetime:
    return timezone.now() + EXPORT_KEPT


class AccountExport(models.Model):
    """An owner's request for everything the account holds, as a ZIP built by a worker
    (docs/privacy.md, "Export"): its progress, its file while the link is valid, and who asked."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    id = models.CharField(primary_key=True, max_length=32, default=new_export_id, editable=False)
    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="exports")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    # Who asked: a person (kept by email too) or a key (its prefix); the link is mailed to the account's owner.
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    key_prefix = models.CharField(max_length=16, blank=True)
    rows_done = models.PositiveIntegerField(default=0)
    rows_total = models.PositiveIntegerField(default=0)
    file_name = models.CharField(max_length=255, blank=True, help_text="The ZIP in storage, while it is kept.")
    file_bytes = models.PositiveBigIntegerField(default=0)
    failure = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    # Written as the build goes: a running export whose heartbeat is old lost its worker.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    link_expires_at = models.DateTimeField(null=True, blank=True, help_text="Downloads stop then; the ZIP goes.")
    # An erasure deleted the ZIP then, before its 24 hours: it could hold what the erasure removed (privacy/exports.py).
    withdrawn_at = models.DateTimeField(null=True, blank=True, help_text="When an erasure deleted the ZIP early.")
    # An erasure ran while it was built: the ZIP could hold what went, so it is built again before it is done.
    rebuild_needed = models.BooleanField(default=False)
    expires_at = models.DateTimeField(default=_export_row_expiry, db_index=True, help_text="The row is pruned then.")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["account", "status"], name="export_account_status")]
        constraints = [
            # One export in flight per account (privacy/exports.py answers that one when asked again).
            models.UniqueConstraint(
                fields=["account"], condition=models.Q(status__in=["queued", "running"]), name="export_one_in_flight"
            )
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"

    def is_expired(self, now: datetime) -> bool:
        return self.status == self.Status.DONE and (
            not self.file_name or self.link_expires_at is None or self.link_expires_at <= now
        )

    def shown_status(self, now: datetime) -> str:
        """queued, running, done or failed as stored; `expired` once a done export's link has lapsed."""
        return "expired" if self.is_expired(now) else self.status

    @property
    def percent(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        return min(99, self.rows_done * 100 // self.rows_total) if self.rows_total else 0
