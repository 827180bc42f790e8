"""Verification's models, fast mode's caches apart from deep mode's shared answers: `fast`
(DomainRecord, CachedVerdict), `deep` (MailboxAnswer, CatchAllAnswer, SmtpSessionCount) and
`retried` (RetriedVerification: temporary unknowns asked again), and
`objections` (Objection).
Imported from here, as Django and the migrations expect of an app's `models`."""

from verification.models.deep import (
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
from verification.models.fast import (
    CachedVerdict,
    CachedVerdictQuerySet,
    DomainRecord,
    DomainRecordQuerySet,
)
from verification.models.objections import Objection, ObjectionQuerySet
from verification.models.retried import RetriedVerification, RetriedVerificationQuerySet

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
