from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, models, transaction
from django.db.models import F, Sum
from django.utils import timezone

from lib import sql
from verification.engine import DomainAnswer, DomainStatus, Verdict
from verification.engine.mailboxes import Answer
from verification.engine.modes import ValidationMode
from verification.engine.smtp_replies import Meaning, Reply

SQLITE_WRITE_BATCH = 200


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
        if sql.is_postgresql():
            yield from sql.fetch_all(select + " AND domain = ANY(%s)", [now, domains])
            return
        for chunk in _batches(domains, 900):  # under SQLite's bound-parameter limit
            yield from sql.fetch_all(
                select + f" AND domain IN ({sql.placeholders(len(chunk))})", [sql.db_datetime(now), *chunk]
            )

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
        resolved_at = sql.db_datetime(now)
        rows = [
            (
                a.domain,
                a.status.value,
                sql.db_json(list(a.mx_hosts)),
                resolved_at,
                sql.db_datetime(now + timedelta(seconds=a.ttl)),
            )
            for a in answers
        ]
        for batch in _batches(rows, SQLITE_WRITE_BATCH):
            with transaction.atomic():
                sql.execute_many(statement, batch)


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


def _batches[T](items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class CachedVerdictQuerySet(models.QuerySet["CachedVerdict"]):
    # Both statements run on every single verification: hand-written (see lib/sql.py).

    def fresh(self, *, account_id: int, email: str, validation_mode: str) -> Verdict | None:
        if not _storable(email):
            return None
        row = sql.fetch_one(
            f"SELECT verdict FROM {sql.table(CachedVerdict)}"
            f" WHERE account_id = %s AND email = %s AND validation_mode = %s AND expires_at > %s",
            [account_id, email, validation_mode, sql.db_datetime(timezone.now())],
        )
        return Verdict.from_dict(sql.from_json(row[0])) if row else None

    def store(self, *, account_id: int, verdict: Verdict) -> None:
        if not verdict.cache_seconds or not _storable(verdict.email):
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


def _storable(email: str) -> bool:
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


# How long an MX's answer about a mailbox is kept: the verdict cache's lifetime for the verdict
# it leads to (an accepted address: valid or catch-all, 24 h; refused: invalid, 1 h). A 4xx, a
# block or silence is never kept: it says nothing lasting about the mailbox.
MAILBOX_ANSWER_SECONDS = {
    Meaning.ACCEPTED: 24 * 3600,
    Meaning.FULL: 24 * 3600,
    Meaning.NO_MAILBOX: 3600,
    Meaning.DISABLED: 3600,
}
CATCH_ALL_SECONDS = 24 * 3600


class MailboxAnswerQuerySet(models.QuerySet["MailboxAnswer"]):
    def fresh_many(self, emails: Collection[str]) -> dict[str, Answer]:
        rows = self.filter(email__in=list(emails), expires_at__gt=timezone.now())
        return {row.email: Answer(Reply(row.code, row.text), Meaning(row.meaning)) for row in rows}

    def store_many(self, answers: dict[str, Answer]) -> None:
        """One upsert for all (a bulk chunk stores hundreds); sorted, so writers lock in one order."""
        now = timezone.now()
        rows = [
            MailboxAnswer(
                email=email,
                code=answer.reply.code,
                text=answer.reply.text[:1000],
                meaning=answer.meaning.value,
                asked_at=now,
                expires_at=now + timedelta(seconds=MAILBOX_ANSWER_SECONDS[answer.meaning]),
            )
            for email, answer in sorted(answers.items())
            if answer.meaning in MAILBOX_ANSWER_SECONDS and _storable(email)
        ]
        MailboxAnswer._default_manager.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["email"],
            update_fields=["code", "text", "meaning", "asked_at", "expires_at"],
        )


class MailboxAnswer(models.Model):
    """Shared across accounts: what a domain's MX answered to RCPT TO for an address, so the same
    mailbox is not asked twice within the verdict cache's lifetimes, whoever asks."""

    email = models.CharField(max_length=1000, unique=True)
    code = models.PositiveSmallIntegerField()
    text = models.CharField(max_length=1000)
    meaning = models.CharField(max_length=24, choices=[(m.value, m.value) for m in Meaning])
    asked_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    objects = MailboxAnswerQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.email}: {self.code}"


class CatchAllAnswerQuerySet(models.QuerySet["CatchAllAnswer"]):
    def fresh_many(self, domains: Collection[str]) -> dict[str, bool]:
        rows = self.filter(domain__in=list(domains), expires_at__gt=timezone.now())
        return {row.domain: row.accepts_any for row in rows}

    def store_many(self, answers: dict[str, bool]) -> None:
        now, expires_at = timezone.now(), timezone.now() + timedelta(seconds=CATCH_ALL_SECONDS)
        rows = [
            CatchAllAnswer(domain=domain, accepts_any=accepts, asked_at=now, expires_at=expires_at)
            for domain, accepts in sorted(answers.items())
        ]
        CatchAllAnswer._default_manager.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["domain"],
            update_fields=["accepts_any", "asked_at", "expires_at"],
        )


class CatchAllAnswer(models.Model):
    """Shared across accounts: whether a domain accepts mail for any address, asked with the
    catch-all probe, for 24 hours."""

    domain = models.CharField(max_length=253, unique=True)
    accepts_any = models.BooleanField()
    asked_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    objects = CatchAllAnswerQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.domain}: {'catch-all' if self.accepts_any else 'not catch-all'}"


SMTP_SESSION_DAYS = 7


class SmtpSessionCountQuerySet(models.QuerySet["SmtpSessionCount"]):
    def record(self, outcomes: Iterable[str]) -> None:
        """Count sessions by outcome in this minute's rows (every process adds to the same rows)."""
        now = timezone.now()
        minute = now.replace(second=0, microsecond=0)
        for outcome, count in sorted(Counter(outcomes).items()):
            row, _ = self.get_or_create(
                minute=minute,
                outcome=outcome,
                defaults={"count": 0, "expires_at": minute + timedelta(days=SMTP_SESSION_DAYS)},
            )
            self.filter(pk=row.pk).update(count=F("count") + count)

    def since(self, start: datetime) -> dict[str, int]:
        rows = self.filter(minute__gte=start).values("outcome").annotate(total=Sum("count"))
        return {row["outcome"]: row["total"] for row in rows}


class SmtpSessionCount(models.Model):
    """SMTP sessions of deep verification opened per minute, by outcome, for the staff dashboard
    (a rising share of `blocked` means our sending IP is listed). Kept 7 days."""

    minute = models.DateTimeField()
    outcome = models.CharField(max_length=20)
    count = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)

    objects = SmtpSessionCountQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["minute", "outcome"], name="smtp_session_count_unique")]

    def __str__(self) -> str:
        return f"{self.minute:%Y-%m-%d %H:%M} {self.outcome}: {self.count}"
