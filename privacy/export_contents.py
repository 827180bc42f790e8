"""What an account's export holds (docs/privacy.md, "Export"): one section a file, each a query of
the account's own rows and the columns taken from them.

Never a secret: no key hash, no signing secret, no password, no feedback webhook token. Reported
outcomes go without the address's key (a keyed hash, meaningless without the server's secret);
jobs go as their metadata, not their addresses (their result files are downloaded from the job).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import models

from accounts.models import Account, ApiKey, AuditEvent, Membership
from billing.models import BillingDetails, LedgerEntry, Payment
from feedback.models import FeedbackEvent
from jobs.models import Job

# Rows fetched from the database at a time: memory stays flat whatever the ledger's length.
CHUNK_ROWS = 2000


@dataclass(frozen=True)
class Section:
    """One file pair of the ZIP, `<name>.json` and `<name>.csv`: `fields` read from `rows`, shown as `columns`."""

    name: str
    rows: models.QuerySet[Any]
    fields: tuple[str, ...]
    columns: tuple[str, ...]

    def count(self) -> int:
        return self.rows.count()

    def records(self) -> Iterator[dict[str, object]]:
        """Each row as {column: value}, datetimes in RFC 3339 UTC, fetched CHUNK_ROWS at a time."""
        for values in self.rows.values_list(*self.fields).iterator(chunk_size=CHUNK_ROWS):
            yield dict(zip(self.columns, map(_plain, values), strict=True))


def _plain(value: object) -> object:
    if isinstance(value, datetime):  # isoformat: a third of strftime's time, on every row's dates
        return value.astimezone(UTC).isoformat(timespec="seconds").removesuffix("+00:00") + "Z"
    return str(value) if isinstance(value, uuid.UUID) else value


def _section(name: str, rows: models.QuerySet[Any], fields: dict[str, str]) -> Section:
    """`fields`: {column in the export: the field (or lookup) it is read from}."""
    return Section(name, rows, tuple(fields.values()), tuple(fields))


def export_sections(account: Account) -> list[Section]:
    """Every section of the account's export, in the ZIP's order."""
    return [
        _account(account),
        _section("members", Membership.objects.filter(account=account).order_by("created_at", "pk"), _MEMBERS),
        _section("api_keys", ApiKey.objects.filter(account=account).order_by("created_at", "pk"), _KEYS),
        _section("credit_ledger", LedgerEntry.objects.filter(account=account).order_by("created_at", "pk"), _LEDGER),
        _section("payments", Payment.objects.filter(account=account).order_by("created_at", "pk"), _PAYMENTS),
        _section("audit_log", AuditEvent.objects.filter(account=account).order_by("created_at", "pk"), _AUDIT),
        _section("jobs", Job.objects.filter(account=account).order_by("created_at", "pk"), _JOBS),
        _section(
            "feedback_reports", FeedbackEvent.objects.filter(account=account).order_by("occurred_at", "pk"), _FEEDBACK
        ),
    ]


def _account(account: Account) -> Section:
    """The account and its billing details: one row."""
    rows = Account.objects.filter(pk=account.pk)
    details = BillingDetails.objects.filter(account=account)
    rows = rows.annotate(
        billing_name=models.Subquery(details.values("name")[:1]),
        billing_address=models.Subquery(details.values("address")[:1]),
        billing_tax_id=models.Subquery(details.values("tax_id")[:1]),
    )
    return _section("account", rows, _ACCOUNT)


_ACCOUNT = {
    "id": "public_id",
    "owner_email": "owner__email",
    "plan": "plan__code",
    "credit_balance": "credit_balance",
    "created_at": "created_at",
    "email_confirmed_at": "email_confirmed_at",
    "require_two_factor": "require_two_factor",
    "callback_url": "callback_url",
    "job_retention_days": "job_retention_days",
    "probe_region": "probe_region",
    "billing_name": "billing_name",
    "billing_address": "billing_address",
    "billing_tax_id": "billing_tax_id",
}
_MEMBERS = {"email": "user__email", "role": "role", "joined_at": "created_at"}
# No key_hash: only its display prefix, as the keys page shows it.
_KEYS = {
    "name": "name",
    "prefix": "prefix",
    "kind": "kind",
    "mode": "key_mode",
    "scope": "scope",
    "created_by": "created_by__email",
    "created_at": "created_at",
    "last_used_at": "last_used_at",
    "expires_at": "expires_at",
    "revoked_at": "revoked_at",
    "allowed_ips": "allowed_ips",
    "allowed_origins": "allowed_origins",
    "daily_cap": "daily_cap",
    "monthly_cap": "monthly_cap",
}
_LEDGER = {
    "id": "pk",
    "created_at": "created_at",
    "kind": "kind",
    "amount": "amount",
    "balance_after": "balance_after",
    "reference": "reference",
    "note": "note",
}
_PAYMENTS = {
    "stripe_id": "stripe_id",
    "created_at": "created_at",
    "kind": "kind",
    "product": "product",
    "credits": "credits",
    "cents": "cents",
    "currency": "currency",
    "status": "status",
    "auto_recharge": "off_session",
    "receipt_url": "receipt_url",
    "failure": "failure",
}
_AUDIT = {
    "created_at": "created_at",
    "action": "action",
    "actor_email": "actor_email",
    "key_prefix": "key_prefix",
    "ip": "ip",
    "detail": "detail",
}
# A job's metadata; its addresses and verdicts are in its result files, not here.
_JOBS = {
    "id": "id",
    "filename": "filename",
    "status": "status",
    "validation_mode": "validation_mode",
    "mode": "key_mode",
    "total": "total",
    "processed": "processed",
    "valid": "valid",
    "invalid": "invalid",
    "risky": "risky",
    "unknown": "unknown",
    "credits_refunded": "credits_refunded",
    "partial": "partial",
    "failure_reason": "failure_reason",
    "callback_url": "callback_url",
    "notify_email": "notify_email",
    "retention_days": "retention_days",
    "created_at": "created_at",
    "started_at": "started_at",
    "completed_at": "completed_at",
    "files_deleted_at": "files_expired_at",
}
_FEEDBACK = {"domain": "domain", "outcome": "outcome", "occurred_at": "occurred_at", "kept_until": "expires_at"}
