"""A verdict as a row of the result file: its columns, its cells and the CSV text of a chunk's rows
(the customer's file is assembled from these rows by jobs/files.py)."""

from __future__ import annotations

import csv
import functools
import io
import re
from collections.abc import Sequence

from lib.csvcells import spreadsheet_safe
from verification.engine import Checks, Status, SubStatus, Verdict
from verification.engine.reasons import typo_reason, verdict_reason

RESULT_COLUMNS = (
    "email",
    "status",
    "sub_status",
    "is_valid",
    "confidence",
    "score",
    "syntax_valid",
    "domain_valid",
    "mx_found",
    "smtp_valid",
    "is_disposable",
    "is_role_based",
    "is_catch_all",
    "is_free_provider",
    "did_you_mean",
    "mail_provider",
    # Bounce feedback (docs/feedback.md): a catch-all row's delivery estimate and its basis, the report a row followed.
    "deliverability",
    "deliverability_basis",
    "feedback",
    # The verdict in words, a likely typo first (verification/engine/reasons.py).
    "reason",
)


_CHECK_COLUMNS = RESULT_COLUMNS[6:14]


def result_text(verdicts: Sequence[Verdict]) -> str:
    """The verdicts' result rows as CSV, as `csv.writer` writes each one's `result_row`.

    Most rows differ from the others of their outcome only by the address (no suggestion, estimate
    or report of their own, nothing to quote): such a row is its address, then its outcome's cells
    as text written once per outcome, not once per row (a bulk chunk writes 2,000 rows of a few
    dozen outcomes). The rest go through the CSV writer.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for verdict in verdicts:
        email = spreadsheet_safe(verdict.email)
        if verdict.did_you_mean or verdict.deliverability or verdict.feedback or QUOTED.search(email):
            writer.writerow(result_row(verdict))
        else:
            buffer.write(email + _outcome_text(*_outcome(verdict)))
    return buffer.getvalue()


def result_row(verdict: Verdict) -> list[str]:
    row = [spreadsheet_safe(verdict.email), *_verdict_cells(*_outcome(verdict))]
    if verdict.did_you_mean:
        row[_DID_YOU_MEAN] = spreadsheet_safe(verdict.did_you_mean)
        row[_REASON] = spreadsheet_safe(typo_reason(verdict.did_you_mean))
    if verdict.deliverability:
        row[_DELIVERABILITY : _DELIVERABILITY + 2] = (
            cell(verdict.deliverability.estimate),
            cell(verdict.deliverability.basis),
        )
    if verdict.feedback:
        row[_FEEDBACK] = cell(verdict.feedback.outcome)
    return row


# The cells a verdict shares with every verdict of the same outcome: computed once per outcome, not
# per row (a bulk chunk writes 2,000 rows of a few dozen outcomes).
_DID_YOU_MEAN = RESULT_COLUMNS.index("did_you_mean")


_DELIVERABILITY = RESULT_COLUMNS.index("deliverability")


_FEEDBACK = RESULT_COLUMNS.index("feedback")


_REASON = RESULT_COLUMNS.index("reason")


# What makes the CSV writer quote a cell (the excel dialect's delimiter, quote and line breaks).
QUOTED = re.compile(r'[,"\r\n]')


_Outcome = tuple[Checks, Status, SubStatus | None, bool, str, int, str | None]


def _outcome(verdict: Verdict) -> _Outcome:
    return (
        verdict.checks,
        verdict.status,
        verdict.sub_status,
        verdict.is_valid,
        verdict.confidence,
        verdict.score,
        verdict.mail_provider,
    )


@functools.lru_cache(maxsize=4096)
def _verdict_cells(
    checks: Checks,
    status: Status,
    sub_status: SubStatus | None,
    is_valid: bool,
    confidence: str,
    score: int,
    mail_provider: str | None,
) -> tuple[str, ...]:
    """Every cell after the email: the per-row ones (did_you_mean, deliverability, feedback) left empty,
    the reason the sub-status's (a row with a suggestion gives its typo instead: result_row)."""
    values: list[object] = [
        status.value,
        sub_status.value if sub_status else None,
        is_valid,
        confidence,
        score,
        *(getattr(checks, column) for column in _CHECK_COLUMNS),
        None,
        mail_provider,
        None,
        None,
        None,
        verdict_reason(sub_status, None),
    ]
    return tuple(cell(value) for value in values)


@functools.lru_cache(maxsize=4096)
def _outcome_text(*outcome: object) -> str:
    """The outcome's cells as the end of a CSV row, from the comma after the address to the line's end."""
    buffer = io.StringIO()
    csv.writer(buffer).writerow(["", *_verdict_cells(*outcome)])
    return buffer.getvalue()


def cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return spreadsheet_safe(str(value))
