from __future__ import annotations

from typing import Any

from django.db import models
from django.utils import timezone

from accounts.models import KeyMode


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
