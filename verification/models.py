from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from lib import sql
from verification.engine import DomainAnswer, DomainStatus, Verdict


class DomainRecordQuerySet(models.QuerySet["DomainRecord"]):
    def get_many(self, domains: Collection[str]) -> dict[str, DomainAnswer]:
        """Fresh answers for these domains. Hand-written (lib/sql.py): every verification reads here."""
        now = timezone.now()
        found: dict[str, DomainAnswer] = {}
        for chunk in _batches(list(domains), 900):  # under SQLite's bound-parameter limit
            rows = sql.fetch_all(
                f"SELECT domain, status, mx_hosts, expires_at FROM {sql.table(DomainRecord)}"
                f" WHERE domain IN ({sql.placeholders(len(chunk))}) AND expires_at > %s",
                [*chunk, sql.db_datetime(now)],
            )
            for domain, status, hosts, expires_at in rows:
                left = _seconds_left(sql.aware(expires_at), now)
                found[domain] = DomainAnswer(domain, DomainStatus(status), left, tuple(sql.from_json(hosts)))
        return found

    def put_many(self, answers: Iterable[DomainAnswer]) -> None:
        """Store definitive answers until their TTL runs out (a bulk chunk writes thousands at once)."""
        now = timezone.now()
        resolved_at = sql.db_datetime(now)
        # Sorted: two workers storing overlapping domains lock their rows in the same order,
        # so PostgreSQL never finds them deadlocked.
        rows = [
            (
                a.domain,
                a.status.value,
                sql.db_json(list(a.mx_hosts)),
                resolved_at,
                sql.db_datetime(now + timedelta(seconds=a.ttl)),
            )
            for a in sorted(answers, key=lambda answer: answer.domain)
            if a.cacheable
        ]
        if not rows:
            return
        with transaction.atomic():
            sql.execute_many(
                f"INSERT INTO {sql.table(DomainRecord)} (domain, status, mx_hosts, resolved_at, expires_at)"
                f" VALUES (%s, %s, %s, %s, %s) ON CONFLICT (domain) DO UPDATE SET status = excluded.status,"
                f" mx_hosts = excluded.mx_hosts, resolved_at = excluded.resolved_at, expires_at = excluded.expires_at",
                rows,
            )


class DomainRecord(models.Model):
    """Shared across accounts: what DNS said about a domain, until its TTL runs out."""

    domain = models.CharField(max_length=253, unique=True)
    status = models.CharField(max_length=10, choices=[(s.value, s.value) for s in DomainStatus])
    mx_hosts = models.JSONField(default=list)
    resolved_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    objects = DomainRecordQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.domain}: {self.status}"


def _seconds_left(expires_at: datetime, now: datetime) -> int:
    return max(0, int((expires_at - now).total_seconds()))


def _batches(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class CachedVerdictQuerySet(models.QuerySet["CachedVerdict"]):
    # Both statements run on every single verification: hand-written (see lib/sql.py).

    def fresh(self, *, account_id: int, email: str, mode: str) -> Verdict | None:
        if not _storable(email):
            return None
        row = sql.fetch_one(
            f"SELECT verdict FROM {sql.table(CachedVerdict)}"
            f" WHERE account_id = %s AND email = %s AND mode = %s AND expires_at > %s",
            [account_id, email, mode, sql.db_datetime(timezone.now())],
        )
        return Verdict.from_dict(sql.from_json(row[0])) if row else None

    def store(self, *, account_id: int, verdict: Verdict) -> None:
        if not verdict.cache_seconds or not _storable(verdict.email):
            return
        now = timezone.now()
        table = sql.table(CachedVerdict)
        sql.execute(
            f"INSERT INTO {table} (account_id, email, mode, status, verdict, created_at, expires_at)"
            f" VALUES (%s, %s, %s, %s, %s, %s, %s)"
            f" ON CONFLICT (account_id, email, mode) DO UPDATE SET status = excluded.status,"
            f" verdict = excluded.verdict, created_at = excluded.created_at, expires_at = excluded.expires_at",
            [
                account_id,
                verdict.email,
                verdict.validation_mode,
                verdict.status.value,
                sql.db_json(verdict.to_dict()),
                sql.db_datetime(now),
                sql.db_datetime(now + timedelta(seconds=verdict.cache_seconds)),
            ],
        )


def _storable(email: str) -> bool:
    # PostgreSQL text cannot hold NUL. Such an address is invalid syntax, found again without DNS.
    return "\x00" not in email


class CachedVerdict(models.Model):
    """Per account, so one customer's traffic never shows in another's `cached` flag."""

    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="cached_verdicts")
    email = models.CharField(max_length=1000)
    mode = models.CharField(max_length=10, default="fast")
    status = models.CharField(max_length=10)
    verdict = models.JSONField()
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    objects = CachedVerdictQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "email", "mode"], name="cached_verdict_unique")]

    def __str__(self) -> str:
        return f"{self.email}: {self.status}"


class IdempotencyRecord(models.Model):
    class State(models.TextChoices):
        RUNNING = "running"
        DONE = "done"

    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    state = models.CharField(max_length=10, choices=State.choices, default=State.RUNNING)
    response_status = models.PositiveSmallIntegerField(null=True)
    response_body = models.BinaryField(default=b"")
    response_headers = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "key"], name="idempotency_key_unique")]

    def __str__(self) -> str:
        return f"{self.key} ({self.state})"

    def complete(self, *, status: int, body: bytes, headers: dict[str, Any]) -> None:
        self.state = self.State.DONE
        self.response_status, self.response_body, self.response_headers = status, body, headers
        self.save(update_fields=["state", "response_status", "response_body", "response_headers"])
