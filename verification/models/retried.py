"""Deep verifications answered `unknown` for a temporary reason, asked again in the background on
VERIFIER_SMTP_RETRY_SCHEDULE until they resolve or give up (docs/deep.md, "Unknowns resolve later")."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import models
from django.db.models import F
from django.utils import timezone

from lib.tokens import random_base62

# A settled verification is readable this long (GET /v1/verifications/{id}), then pruned with the
# address its result names. Its event's retries end within three hours (jobs/callbacks.py).
KEPT_SETTLED = timedelta(days=7)
# A claimed attempt not settled within this long (its worker died) is made again.
ATTEMPT_LEASE = timedelta(minutes=10)


VERIFICATION_ID_PATTERN = "ver_[0-9A-Za-z]{24}"


def new_verification_id() -> str:
    return "ver_" + random_base62(24)


class RetriedVerificationQuerySet(models.QuerySet["RetriedVerification"]):
    def due(self, now: datetime) -> RetriedVerificationQuerySet:
        return self.filter(state=RetriedVerification.State.PENDING, next_attempt_at__lte=now).order_by(
            "next_attempt_at"
        )

    def claim(self, *, pk: str, attempts: int, now: datetime) -> bool:
        """Take attempt `attempts + 1` of a due verification; the row count says who won."""
        return bool(
            self.due(now)
            .filter(pk=pk, attempts=attempts)
            .update(attempts=F("attempts") + 1, next_attempt_at=now + ATTEMPT_LEASE)
        )


class RetriedVerification(models.Model):
    """One address of one account's deep verification, its latest result, and where its asking stands."""

    class State(models.TextChoices):
        PENDING = "pending"
        RESOLVED = "resolved"
        GAVE_UP = "gave_up"

    id = models.CharField(primary_key=True, max_length=32, default=new_verification_id, editable=False)
    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="retried_verifications")
    # Whose spend caps count the credit taken when it resolves (unknowns free); gone with the key.
    key = models.ForeignKey("accounts.ApiKey", models.SET_NULL, null=True, blank=True, related_name="+")
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Times asked again so far.")
    next_attempt_at = models.DateTimeField(null=True, blank=True, db_index=True)
    result = models.JSONField(help_text="The latest verdict, as answered (it names the address).")
    charged = models.BooleanField(help_text="Whether its one credit has been taken.")
    callback_url = models.URLField(max_length=2000, blank=True)
    source = models.CharField(max_length=10, default="api")
    created_at = models.DateTimeField(default=timezone.now)
    settled_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(db_index=True)

    objects = RetriedVerificationQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.pk} ({self.state})"

    @property
    def email(self) -> str:
        return str(self.result["email"])

    def resolution(self) -> dict[str, Any]:
        """Where its asking stands, as GET /v1/verifications/{id} and the event say it."""
        return {"state": self.state, "attempts": self.attempts, "next_attempt_at": self.next_attempt_at}
