"""Deep mode's shared answers (docs/deep.md): what a mail server said of a mailbox and whether a
domain accepts any address, kept for every account; and the SMTP sessions opened per MX address."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from django.db import models
from django.db.models import F, Sum
from django.utils import timezone

from lib import sql
from lib.address_keys import KEY_LENGTH, address_key, address_keys
from verification.engine.smtp_answers import Answer
from verification.engine.smtp_replies import Meaning, Reply
from verification.models.verdict_caches import storable

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
ADDRESS_PLACEHOLDER = "<address>"


class MailboxAnswerQuerySet(models.QuerySet["MailboxAnswer"]):
    def fresh_many(self, emails: Collection[str]) -> dict[str, Answer]:
        """Hand-written (lib/sql.py): a 20,000-row deep batch asks for every address, and the ORM's
        IN list of 20,000 keys took longer to build than the statements took to run."""
        keys = address_keys(emails)
        select = f"SELECT address_key, code, text, meaning FROM {sql.table(MailboxAnswer)} WHERE expires_at > %s"
        rows = sql.fetch_all_in(select, [sql.db_datetime(timezone.now())], "address_key", list(keys))
        return {keys[key]: Answer(Reply(code, text), Meaning(meaning)) for key, code, text, meaning in rows}

    def store_many(self, answers: dict[str, Answer]) -> None:
        """Upserts, sorted so writers lock in one order, a batch a transaction (sql.execute_batched).
        Hand-written (lib/sql.py): a bulk chunk stores 2,000, and the ORM's bulk_create spent more
        time building them than a 2,000-row deep job's SMTP sessions spend on CPU."""
        now = timezone.now()
        asked_at = sql.db_datetime(now)
        expiry = {meaning: sql.db_datetime(now + timedelta(seconds=s)) for meaning, s in MAILBOX_ANSWER_SECONDS.items()}
        rows = sorted(
            (address_key(e), a.reply.code, reply_text(a.reply.text, e), a.meaning.value, asked_at, expiry[a.meaning])
            for e, a in answers.items()
            if a.meaning in MAILBOX_ANSWER_SECONDS and storable(e)
        )
        if not rows:
            return
        sql.execute_batched(
            f"INSERT INTO {sql.table(MailboxAnswer)} (address_key, code, text, meaning, asked_at, expires_at)"
            " VALUES (%s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (address_key) DO UPDATE SET code = excluded.code, text = excluded.text,"
            " meaning = excluded.meaning, asked_at = excluded.asked_at, expires_at = excluded.expires_at",
            rows,
        )


def reply_text(text: str, email: str) -> str:
    """The reply as kept: a server's `550 <jo@example.com>: no such user` names the address, which
    the shared store must not hold (docs/privacy.md). Most replies do not name it: an ASCII reply
    and address are told apart without building a pattern for each address (a chunk's 2,000 patterns
    were a twentieth of a deep chunk's worker time, each new one compiled)."""
    address = email.strip()
    if text.isascii() and address.isascii() and address.lower() not in text.lower():
        return text[:1000]
    return re.sub(re.escape(address), ADDRESS_PLACEHOLDER, text, flags=re.IGNORECASE)[:1000]


class MailboxAnswer(models.Model):
    """Shared across accounts: what a domain's MX answered to RCPT TO for an address, so the same
    mailbox is not asked twice within the verdict cache's lifetimes, whoever asks. Keyed by the
    address's HMAC (lib/address_keys.py), never the address."""

    address_key = models.CharField(max_length=KEY_LENGTH, unique=True)
    code = models.PositiveSmallIntegerField()
    text = models.CharField(max_length=1000)
    meaning = models.CharField(max_length=24, choices=[(m.value, m.value) for m in Meaning])
    asked_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)

    objects = MailboxAnswerQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.address_key[:12]}…: {self.code}"


class CatchAllAnswerQuerySet(models.QuerySet["CatchAllAnswer"]):
    def fresh_many(self, domains: Collection[str]) -> dict[str, bool]:
        """Hand-written, as MailboxAnswer's (a 20,000-row deep batch asks for 4,000 domains)."""
        select = f"SELECT domain, accepts_any FROM {sql.table(CatchAllAnswer)} WHERE expires_at > %s"
        rows = sql.fetch_all_in(select, [sql.db_datetime(timezone.now())], "domain", list(domains))
        return {domain: bool(accepts) for domain, accepts in rows}

    def store_many(self, answers: dict[str, bool]) -> None:
        """Upserts, sorted, by hand as MailboxAnswer's are: a 20,000-row deep batch stores 4,000
        domains, and bulk_create's model objects cost more than the statements."""
        now = timezone.now()
        asked_at, expires_at = sql.db_datetime(now), sql.db_datetime(now + timedelta(seconds=CATCH_ALL_SECONDS))
        rows = [(domain, accepts, asked_at, expires_at) for domain, accepts in sorted(answers.items())]
        if not rows:
            return
        sql.execute_batched(
            f"INSERT INTO {sql.table(CatchAllAnswer)} (domain, accepts_any, asked_at, expires_at)"
            " VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (domain) DO UPDATE SET accepts_any = excluded.accepts_any,"
            " asked_at = excluded.asked_at, expires_at = excluded.expires_at",
            rows,
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
