from __future__ import annotations

from typing import Any

from django.db import models
from django.utils import timezone

from accounts.models import KeyMode
from lib import sql


class IdempotencyRecord(models.Model):
    class State(models.TextChoices):
        RUNNING = "running"
        DONE = "done"

    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="+")
    key_mode = models.CharField(max_length=4, choices=KeyMode.choices, default=KeyMode.LIVE, db_default=KeyMode.LIVE)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    state = models.CharField(max_length=10, choices=State.choices, default=State.RUNNING)
    response_status = models.PositiveSmallIntegerField(null=True)
    response_body = models.BinaryField(default=b"")
    response_headers = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "verification_idempotencyrecord"  # where it was created, before apikit/ (then api/) held it
        constraints = [
            models.UniqueConstraint(fields=["account", "key_mode", "key"], name="idempotency_mode_key_unique")
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.state})"

    def complete(self, *, status: int, body: bytes, headers: dict[str, Any]) -> None:
        self.state = self.State.DONE
        self.response_status, self.response_body, self.response_headers = status, body, headers
        self.save(update_fields=["state", "response_status", "response_body", "response_headers"])


# The per-key throttle's count where there is no Redis (apikit/key_throttle.py).
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

    key = models.OneToOneField("accounts.ApiKey", models.CASCADE, primary_key=True, related_name="+")
    window_second = models.BigIntegerField(help_text="Unix time of the window's second.")
    hits = models.PositiveIntegerField()

    objects = RateWindowQuerySet.as_manager()

    class Meta:
        db_table = "accounts_ratewindow"  # where it was created, before it moved beside the throttle

    def __str__(self) -> str:
        return f"key {self.key_id}: {self.hits} in {self.window_second}"
