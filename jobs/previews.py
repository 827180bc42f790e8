"""A preview: what an upload would be, free for every plan (no job, no file kept, no credit moved),
with an estimate of the list's quality from a sample (jobs/evaluation.py)."""

from __future__ import annotations

from typing import TypedDict

from accounts.models import Account, KeyMode
from jobs.csvfile import AddressList
from jobs.estimates import estimated_seconds
from jobs.evaluation import Estimate, list_evaluate
from jobs.services import invalid_syntax, upload_check
from verification.engine.modes import ValidationMode
from verification.services import mode_require

# Sample addresses a preview shows.
SAMPLE_SIZE = 5


class Counts(TypedDict):
    rows: int
    unique: int
    duplicates: int
    invalid_syntax: int
    email_column: str | int
    has_header: bool
    columns: list[str]
    sample: list[str]
    credits_needed: int
    credits_available: int
    estimated_seconds: int


class Preview(Counts):
    bulk_in_plan: bool
    estimate: Estimate | None
    estimate_withheld: str | None
    evaluations_left_today: int


def job_preview(
    *,
    account: Account,
    upload: object,
    callback_url: object,
    email_column: str | None,
    validation_mode: object = ValidationMode.FAST,
    key_mode: str = KeyMode.LIVE,
) -> tuple[Preview, AddressList]:
    """The upload's checks but the plan's and the balance's (a preview is how one learns what a list
    is worth and would cost), and the estimate of its quality."""
    mode_require(validation_mode, sandbox=key_mode == KeyMode.TEST)
    found, _ = upload_check(upload=upload, callback_url=callback_url, email_column=email_column)
    counts = preview_of(found, credits_available=account.credit_balance, mode=ValidationMode(str(validation_mode)))
    evaluation = list_evaluate(account=account, addresses=found.addresses, sandbox=key_mode == KeyMode.TEST)
    preview = Preview(
        **counts,
        bulk_in_plan=account.plan.allows_bulk,
        estimate=evaluation.estimate,
        estimate_withheld=evaluation.withheld,
        evaluations_left_today=evaluation.evaluations_left,
    )
    return preview, found


def preview_of(found: AddressList, *, credits_available: int, mode: ValidationMode = ValidationMode.FAST) -> Counts:
    unique = len(found.addresses)
    return {
        "rows": found.rows,
        "unique": unique,
        "duplicates": found.duplicates,
        "invalid_syntax": invalid_syntax(found),
        "email_column": found.columns[found.email_column] if found.has_header else found.email_column + 1,
        "has_header": found.has_header,
        "columns": found.columns,
        "sample": found.addresses[:SAMPLE_SIZE],
        "credits_needed": unique,
        "credits_available": credits_available,
        "estimated_seconds": estimated_seconds(unique, addresses=found.addresses, mode=mode),
    }
