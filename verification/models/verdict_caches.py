"""The verdict caches: each domain's DNS answer, shared by every account and worker, and each
account's verdicts (fast and deep verdicts alike, keyed by validation mode)."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, models, transaction
from django.utils import timezone

from lib import sql
from verification.engine import DomainAnswer, DomainStatus, Verdict
from verification.engine.modes import ValidationMode


class DomainRecordQuerySet(models.QuerySet["DomainRecord"]):
    # Hand-written (lib/sql.py): every verification reads here, and a bulk chunk reads and
    # writes thousands of domains at once. PostgreSQL takes them as one array parameter.

    def get_many(self, domains: Collection[str]) -> dict[str, DomainAnswer]:
        """Fresh answers for these domains."""
        now = timezone.now()
        found: dict[str, DomainAnswer] = {}
        for domain, status, hosts, expires_at in self._fresh_rows(list(domains), now):
            left = _seconds_left(sql.aware(expires_at), now)
            found[domain] = DomainAnswer(domain, DomainStatus(status), left, tuple(sql.from_json(hosts)))
        return found

    def _fresh_rows(self, domains: list[str], now: datetime) -> Iterator[tuple[Any, ...]]:
        select = f"SELECT domain, status, mx_hosts, expires_at FROM {sql.table(DomainRecord)} WHERE expires_at > %s"
        yield from sql.fetch_all_in(select, [sql.db_datetime(now)], "domain", domains)

    def put_many(self, answers: Iterable[DomainAnswer]) -> None:
        """Store definitive answers until their TTL runs out."""
        # Sorted: two workers storing overlapping domains lock their rows in the same order,
        # so PostgreSQL never finds them deadlocked.
        cacheable = sorted((a for a in answers if a.cacheable), key=lambda answer: answer.domain)
        if not cacheable:
            return
        now = timezone.now()
        insert = f"INSERT INTO {sql.table(DomainRecord)} (domain, status, mx_hosts, resolved_at, expires_at)"
        upsert = (
            " ON CONFLICT (domain) DO UPDATE SET status = excluded.status, mx_hosts = excluded.mx_hosts,"
            " resolved_at = excluded.resolved_at, expires_at = excluded.expires_at"
        )
        if not sql.is_postgresql():
            self._put_sqlite(insert + " VALUES (%s, %s, %s, %s, %s)" + upsert, cacheable, now)
            return
        outermost = not connection.in_atomic_block
        with transaction.atomic():
            if outermost:  # a cache: losing its last instant in a server crash costs a lookup, so no fsync wait
                sql.execute("SET LOCAL synchronous_commit TO OFF", [])
            columns = [
                [a.domain for a in cacheable],
                [a.status.value for a in cacheable],
                [json.dumps(list(a.mx_hosts)) for a in cacheable],
                [a.ttl for a in cacheable],
            ]
            sql.execute(
                insert + " SELECT d, s, m::jsonb, %s, %s + make_interval(secs => t)"
                " FROM unnest(%s::text[], %s::text[], %s::text[], %s::int[]) AS a(d, s, m, t)" + upsert,
                [now, now, *columns],
            )

    def _put_sqlite(self, statement: str, answers: list[DomainAnswer], now: datetime) -> None:
        # SQLite has one writer at a time: rows are built before the write lock is taken, and a
        # bulk chunk's thousands of domains go in short transactions, so a single verification
        # waiting for the lock waits for one batch, not the chunk (a cache: no batch needs another).
        # Expiries are converted once per distinct TTL (a chunk's answers share a handful), not per
        # row; JSON is text on SQLite, as Django writes it.
        resolved_at = sql.db_datetime(now)
        expiry = {ttl: sql.db_datetime(now + timedelta(seconds=ttl)) for ttl in {a.ttl for a in answers}}
        rows = [(a.domain, a.status.value, json.dumps(list(a.mx_hosts)), resolved_at, expiry[a.ttl]) for a in answers]
        sql.execute_batched(statement, rows)


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


class CachedVerdictQuerySet(models.QuerySet["CachedVerdict"]):
    # Both statements run on every single verification: hand-written (see lib/sql.py).

    def fresh(self, *, account_id: int, email: str, validation_mode: ValidationMode) -> Verdict | None:
        if not storable(email):
            return None
        row = sql.fetch_one(
            f"SELECT verdict FROM {sql.table(CachedVerdict)}"
            f" WHERE account_id = %s AND email = %s AND validation_mode = %s AND expires_at > %s",
            [account_id, email, validation_mode, sql.db_datetime(timezone.now())],
        )
        return Verdict.from_dict(sql.from_json(row[0])) if row else None

    def store(self, *, account_id: int, verdict: Verdict) -> None:
        if not verdict.cache_seconds or not storable(verdict.email):
            return
        now = timezone.now()
        table = sql.table(CachedVerdict)
        sql.execute(
            f"INSERT INTO {table} (account_id, email, validation_mode, status, verdict, created_at, expires_at)"
            f" VALUES (%s, %s, %s, %s, %s, %s, %s)"
            f" ON CONFLICT (account_id, email, validation_mode) DO UPDATE SET status = excluded.status,"
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


def storable(email: str) -> bool:
    # PostgreSQL text cannot hold NUL. Such an address is invalid syntax, found again without DNS.
    return "\x00" not in email


class CachedVerdict(models.Model):
    """Per account, so one customer's traffic never shows in another's `cached` flag."""

    account = models.ForeignKey("accounts.Account", models.CASCADE, related_name="cached_verdicts")
    email = models.CharField(max_length=1000)
    validation_mode = models.CharField(
        max_length=10, choices=[(m.value, m.value) for m in ValidationMode], default=ValidationMode.FAST
    )
    status = models.CharField(max_length=10)
    verdict = models.JSONField()
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    objects = CachedVerdictQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "email", "validation_mode"], name="cached_verdict_unique")
        ]

    def __str__(self) -> str:
        return f"{self.email}: {self.status}"
