"""Verification's models: the verdict caches, `verdict_caches` (DomainRecord, CachedVerdict: fast and deep
verdicts alike), what mail servers answered, `mailbox_answers` (MailboxAnswer, CatchAllAnswer,
SmtpSessionCount), `retried` (RetriedVerification: temporary unknowns asked again), and
`objections` (Objection).
Imported from here, as Django and the migrations expect of an app's `models`."""

from verification.models.mailbox_answers import (
    CATCH_ALL_SECONDS,
    MAILBOX_ANSWER_SECONDS,
    SMTP_SESSION_DAYS,
    CatchAllAnswer,
    CatchAllAnswerQuerySet,
    MailboxAnswer,
    MailboxAnswerQuerySet,
    SmtpSessionCount,
    SmtpSessionCountQuerySet,
)
from verification.models.objections import Objection, ObjectionQuerySet
from verification.models.retried import RetriedVerification, RetriedVerificationQuerySet
from verification.models.verdict_caches import (
    CachedVerdict,
    CachedVerdictQuerySet,
    DomainRecord,
    DomainRecordQuerySet,
)

__all__ = [
    "CATCH_ALL_SECONDS",
    "MAILBOX_ANSWER_SECONDS",
    "SMTP_SESSION_DAYS",
    "CachedVerdict",
    "CachedVerdictQuerySet",
    "CatchAllAnswer",
    "CatchAllAnswerQuerySet",
    "DomainRecord",
    "DomainRecordQuerySet",
    "MailboxAnswer",
    "MailboxAnswerQuerySet",
    "RetriedVerification",
    "RetriedVerificationQuerySet",
    "Objection",
    "ObjectionQuerySet",
    "SmtpSessionCount",
    "SmtpSessionCountQuerySet",
]
