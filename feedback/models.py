"""Delivery outcomes customers report (docs/feedback.md): only what the rules need, for 365 days.

An event is an address, an outcome, a time and the reporting account. Every account's verdicts read
every account's outcomes, so the address is kept as its HMAC (lib/address_keys.py), never as
itself; the domain is kept beside it for the catch-all estimate's per-domain counts. Rows expire 365 days after the
outcome (pruned hourly by `expires_at`, lib/prune.py) and go with their account (CASCADE).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from django.db import models
from django.utils import timezone

from lib import sql
from lib.address_keys import KEY_LENGTH, address_keys
from lib.tokens import random_base62

KEPT = timedelta(days=365)
TOKEN_LENGTH = 32


class Outcome(models.TextChoices):
    DELIVERED = "delivered"
    HARD_BOUNCE = "hard_bounce"
    SOFT_BOUNCE = "soft_bounce"
    COMPLAINT = "complaint"


class FeedbackEventQuerySet(models.QuerySet["FeedbackEvent"]):
    def deciding(self, emails: list[str], since: datetime) -> Iterator[tuple[str, int, str, datetime, bool]]:
        """(email, account, outcome, occurred_at, authenticated) of the deliveries and hard bounces of these
        addresses since `since`, by any account.

        Hand-written (lib/sql.py): every verification asks it, and every bulk chunk for up to 2,000
        addresses, where compiling the ORM's IN list cost more than the lookups themselves.
        """
        keys = address_keys(emails)
        select = (
            f"SELECT address_key, account_id, outcome, occurred_at, authenticated FROM {sql.table(FeedbackEvent)}"
            " WHERE occurred_at >= %s AND outcome IN (%s, %s)"
        )
        params: list[object] = [sql.db_datetime(since), Outcome.DELIVERED.value, Outcome.HARD_BOUNCE.value]
        rows = sql.fetch_all_in(select, params, "address_key", list(keys))
        return (
            (keys[key], account, outcome, sql.aware(at), bool(authenticated))
            for key, account, outcome, at, authenticated in rows
        )


class FeedbackEvent(models.Model):
    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="feedback_events")
    address_key = models.CharField(max_length=KEY_LENGTH)
    domain = models.CharField(max_length=253)
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    occurred_at = models.DateTimeField()
    # Came as a sending service's event whose signature or credentials were checked (docs/feedback.md,
    # "Webhooks"); a report through the API, the portal's upload or an unchecked webhook is not.
    authenticated = models.BooleanField(default=False)
    expires_at = models.DateTimeField(db_index=True)

    objects = FeedbackEventQuerySet.as_manager()

    class Meta:
        constraints = [
            # Idempotent: the same report twice (an ESP's retry, a re-uploaded file) is stored once.
            models.UniqueConstraint(
                fields=["account", "address_key", "outcome", "occurred_at"], name="feedback_event_once"
            ),
        ]
        indexes = [
            models.Index(fields=["address_key", "occurred_at"], name="feedback_event_address"),
            models.Index(fields=["domain", "outcome"], name="feedback_event_domain"),
        ]

    def __str__(self) -> str:
        return f"{self.address_key[:12]}…: {self.outcome} at {self.occurred_at:%Y-%m-%d %H:%M}"


def new_token() -> str:
    return random_base62(TOKEN_LENGTH)


class FeedbackInbox(models.Model):
    """An account's secret webhook URLs for its sending service (`/webhooks/feedback/<provider>/<token>`)."""

    account = models.OneToOneField("accounts.Account", models.CASCADE, related_name="feedback_inbox")
    token = models.CharField(max_length=64, unique=True, default=new_token)
    # Mailgun signs its webhooks with this key (its HTTP webhook signing key); blank: not checked.
    mailgun_signing_key = models.CharField(max_length=200, blank=True)
    # SendGrid's Signed Event Webhook verification key (base64 DER or PEM); blank: not checked.
    sendgrid_verification_key = models.TextField(blank=True)
    # The basic-auth credentials Postmark sends from the URL they are written into; blank: not checked.
    postmark_username = models.CharField(max_length=100, blank=True)
    postmark_password = models.CharField(max_length=200, blank=True)
    rotated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"feedback inbox of account {self.account_id}"

    def rotate(self) -> None:
        self.token, self.rotated_at = new_token(), timezone.now()
        self.save(update_fields=["token", "rotated_at"])


class MailgunToken(models.Model):
    """The token of a signed Mailgun event, once seen: the same signature again is a replay (docs/feedback.md,
    "Mailgun"). Kept 24 hours, longer than the 15 minutes a signature's timestamp is believed; pruned hourly
    by `expires_at` (lib/prune.py). A table rather than the cache: the database cache culls entries at random
    once it holds 300, and Redis may evict them, either of which would let a replay in."""

    inbox = models.ForeignKey(FeedbackInbox, models.CASCADE, related_name="+")
    token = models.CharField(max_length=200)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["inbox", "token"], name="mailgun_token_once")]

    def __str__(self) -> str:
        return f"mailgun token {self.token[:8]}… of inbox {self.inbox_id}"
