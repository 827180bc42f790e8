"""What an upload would be, free: no job, no file kept, no credit moved (CONTRACT section 8)."""

from __future__ import annotations

from typing import TypedDict

from accounts.models import Account
from jobs.csvfile import AddressList
from jobs.services import bulk_in_plan, estimated_seconds, upload_check
from verification.engine.syntax import parse

SAMPLE_SIZE = 5


class Preview(TypedDict):
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


def job_preview(
    *, account: Account, upload: object, callback_url: object, email_column: str | None
) -> tuple[Preview, AddressList]:
    """The upload's checks but the balance (a preview is how one learns what a list would cost)."""
    bulk_in_plan(account=account)
    found, _ = upload_check(upload=upload, callback_url=callback_url, email_column=email_column)
    return preview_of(found, credits_available=account.credit_balance), found


def preview_of(found: AddressList, *, credits_available: int) -> Preview:
    unique = len(found.addresses)
    return {
        "rows": found.rows,
        "unique": unique,
        "duplicates": found.duplicates,
        "invalid_syntax": sum(parse(address) is None for address in found.addresses),
        "email_column": found.columns[found.email_column] if found.has_header else found.email_column + 1,
        "has_header": found.has_header,
        "columns": found.columns,
        "sample": found.addresses[:SAMPLE_SIZE],
        "credits_needed": unique,
        "credits_available": credits_available,
        "estimated_seconds": estimated_seconds(unique, addresses=found.addresses),
    }
