"""A job's breakdown as figures for server-rendered SVG: no JavaScript, no inline style (our CSP)."""

from __future__ import annotations

from dataclasses import dataclass

from jobs.models import BREAKDOWN_KEYS, CATCH_ALL_SPLIT, Job
from verification.engine.modes import ValidationMode
from verification.engine.providers import PROVIDER_NAMES
from verification.engine.verdict import DEEP_SUB_STATUSES

STATUSES = ("valid", "risky", "invalid", "unknown")
_LABELS = {
    "invalid_syntax": "Invalid syntax",
    "no_mx_record": "No mail server",
    "disposable": "Disposable",
    "role_based": "Role address",
    "dns_temporary_failure": "DNS failure",
    "catch_all": "Catch-all domain",
    "mailbox_not_found": "No such mailbox",
    "mailbox_disabled": "Mailbox disabled",
    "mailbox_full": "Mailbox full",
    "greylisted": "Greylisted (ask later)",
    "smtp_blocked": "Blocked by the mail server",
    "smtp_unreachable": "Mail server unreachable",
    "smtp_utf8_unsupported": "Server cannot take this mailbox name",
    "verification_failed": "Could not be checked (ours)",
    "address_objected": "Objected to verification",
    "free_provider": "Free provider",
    "did_you_mean": "Likely typo",
    "catch_all_likely": "Catch-all, likely to deliver",
    "catch_all_unlikely": "Catch-all, unlikely to deliver",
}
_DEEP_ONLY = DEEP_SUB_STATUSES | set(CATCH_ALL_SPLIT)


@dataclass(frozen=True)
class Segment:
    key: str
    label: str
    count: int
    percent: float  # of the processed rows
    x: float  # where its bar starts, 0-100 (status segments only)


def status_segments(job: Job) -> list[Segment]:
    """The four statuses side by side on one 0-100 bar."""
    segments, x = [], 0.0
    for status in STATUSES:
        count = getattr(job, status)
        percent = _percent(count, job.processed)
        segments.append(Segment(status, status.capitalize(), count, percent, x))
        x += percent
    return segments


def sub_status_segments(job: Job) -> list[Segment]:
    """Every sub-status (a fast job's page leaves out deep mode's, which it never has)."""
    counts = job.breakdown_counts
    keys = [key for key in BREAKDOWN_KEYS if job.validation_mode == ValidationMode.DEEP or key not in _DEEP_ONLY]
    return [
        Segment(
            key,
            _LABELS.get(key, key.replace("_", " ").capitalize()),
            counts[key],
            _percent(counts[key], job.processed),
            0.0,
        )
        for key in keys
    ]


def mail_provider_segments(job: Job) -> list[Segment]:
    """The providers that run some of the rows' mail, most rows first, then the rest as one."""
    counts = sorted(((n, key) for key, n in job.mail_provider_counts.items() if n), key=lambda c: -c[0])
    segments = [Segment(key, PROVIDER_NAMES[key], n, _percent(n, job.processed), 0.0) for n, key in counts]
    rest = job.processed - sum(n for n, _ in counts)
    return [*segments, Segment("other", "Other or none", rest, _percent(rest, job.processed), 0.0)]


def _percent(count: int, whole: int) -> float:
    return round(count * 100 / whole, 1) if whole else 0.0
