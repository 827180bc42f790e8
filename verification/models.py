from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from django.db import models
from django.utils import timezone

from verification.engine import DomainAnswer, DomainStatus, Verdict


class DomainRecordQuerySet(models.QuerySet["DomainRecord"]):
    def get_many(self, domains: Collection[str]) -> dict[str, DomainAnswer]:
        # Plain tuples, not model instances: a bulk chunk reads thousands of these at once.
        now = timezone.now()
        fields = ("domain", "status", "mx_hosts", "expires_at")
        found: dict[str, DomainAnswer] = {}
        for chunk in _batches(list(domains), 900):  # under SQLite's bound-parameter limit
            for domain, status, hosts, expires_at in self.filter(domain__in=chunk, expires_at__gt=now).values_list(
                *fields
            ):
                found[domain] = DomainAnswer(domain, DomainStatus(status), _seconds_left(expires_at, now), tuple(hosts))
        return found

    def put_many(self, answers: Iterable[DomainAnswer]) -> None:
        now = timezone.now()
        rows = [
            DomainRecord(
                domain=a.domain,
                status=a.status,
                mx_hosts=list(a.mx_hosts),
                resolved_at=now,
                expires_at=now + timedelta(seconds=a.ttl),
            )
            for a in answers
            if a.cacheable
        ]
        if rows:
            DomainRecord.objects.bulk_create(
                rows,
                batch_size=500,
                update_conflicts=True,
                unique_fields=["domain"],
                update_fields=["status", "mx_hosts", "resolved_at", "expires_at"],
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
    def fresh(self, *, account_id: int, email: str, mode: str) -> Verdict | None:
        fresh = self.filter(account_id=account_id, email=email, mode=mode, expires_at__gt=timezone.now())
        stored = fresh.order_by().values_list("verdict", flat=True)[:1]
        return Verdict.from_dict(stored[0]) if stored else None

    def store(self, *, account_id: int, verdict: Verdict) -> None:
        if not verdict.cache_seconds:
            return
        now = timezone.now()
        row = CachedVerdict(
            account_id=account_id,
            email=verdict.email,
            mode=verdict.validation_mode,
            status=verdict.status,
            verdict=verdict.to_dict(),
            created_at=now,
            expires_at=now + timedelta(seconds=verdict.cache_seconds),
        )
        CachedVerdict.objects.bulk_create(
            [row],
            update_conflicts=True,
            unique_fields=["account", "email", "mode"],
            update_fields=["status", "verdict", "created_at", "expires_at"],
        )


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
