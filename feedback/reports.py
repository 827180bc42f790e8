"""One reported outcome, checked: what `POST /v1/feedback`, the portal's CSV upload and the ESP
webhooks all turn their input into before anything is stored (docs/feedback.md)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from feedback.models import KEPT, Outcome
from lib.errors import DomainError
from lib.rfc3339 import rfc3339_parsed

MAX_EVENTS = 1000
# A sender's clock a little ahead of ours does not make its report "in the future".
CLOCK_SKEW = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class Report:
    email: str
    domain: str
    outcome: str
    occurred_at: datetime


def report_of(email: object, outcome: object, occurred_at: object, *, now: datetime, where: str) -> Report | None:
    """The report, or None when it is to be ignored (an address that is none; a time that is not RFC
    3339, lib/rfc3339.py, or is in the future or older than 365 days). A wrong type or an unknown
    outcome is refused."""
    if not isinstance(email, str):
        raise DomainError(f"{where}.email: Must be a string.", "events")
    if outcome not in Outcome.values:
        raise DomainError(f"{where}.outcome: Must be one of {', '.join(Outcome.values)}.", "events")
    moment = now if occurred_at is None else rfc3339_parsed(occurred_at)
    address = address_of(email)
    if address is None or moment is None or not now - KEPT < moment <= now + CLOCK_SKEW:
        return None
    return Report(address, address.rsplit("@", 1)[1], str(outcome), moment)


def address_of(email: str) -> str | None:
    """The address as verification keys it (trimmed, lower case), or None when it is not one."""
    address = email.strip().lower()
    try:
        validate_email(address)
    except ValidationError:
        return None
    return address if len(address) <= 254 else None


def events_of(body: object) -> list[dict[str, object]]:
    """The `events` of a POST /v1/feedback body: a list of 1 to 1,000 objects."""
    if not isinstance(body, dict):
        raise DomainError(f"The body must be a JSON object, not {type(body).__name__}.")
    events = body.get("events")
    if not isinstance(events, list) or not 1 <= len(events) <= MAX_EVENTS:
        raise DomainError(f"events: Must be a list of 1 to {MAX_EVENTS} events.", "events")
    if not all(isinstance(event, dict) for event in events):
        raise DomainError("events: Every event must be an object.", "events")
    return events


MAX_CSV_ROWS = 10_000


def csv_reports(text: str, *, now: datetime) -> list[Report | None]:
    """The portal's upload, `email,outcome[,occurred_at]` a row, a header row allowed. A row with an
    unknown outcome refuses the whole file (nothing stored); one whose time is not RFC 3339 is ignored."""
    rows = [row for row in _csv_rows(text) if any(cell.strip() for cell in row)]
    if rows and [cell.strip().lower() for cell in rows[0][:2]] == ["email", "outcome"]:
        rows = rows[1:]
    if not 1 <= len(rows) <= MAX_CSV_ROWS:
        raise DomainError(f"The file must have 1 to {MAX_CSV_ROWS:,} rows of email,outcome[,occurred_at].", "file")
    return [_csv_report(row, number, now) for number, row in enumerate(rows, start=1)]


def _csv_rows(text: str) -> list[list[str]]:
    reader = csv.reader(io.StringIO(text))
    try:
        return list(reader)
    except csv.Error as error:  # a cell over the reader's field limit (131,072 characters), a stray NUL
        raise DomainError(f"row {reader.line_num}: {error}.", "file") from None


def _csv_report(row: list[str], number: int, now: datetime) -> Report | None:
    cells = [cell.strip() for cell in row] + ["", ""]
    when = cells[2] or None
    try:
        return report_of(cells[0], cells[1].lower(), when, now=now, where=f"row {number}")
    except DomainError as error:
        raise DomainError(error.message, "file") from None
