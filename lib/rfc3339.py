"""RFC 3339 times, strictly: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` and nothing else.

Python's `datetime.fromisoformat` reads all of ISO 8601 (week dates, ordinal dates, no offset, a
space for the T), so a time a client sends is matched against RFC 3339's grammar first.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_RFC3339 = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})T(?P<time>[0-9]{2}:[0-9]{2}:[0-9]{2})(?:\.(?P<fraction>[0-9]+))?"
    r"(?P<offset>Z|[+-][0-9]{2}:[0-9]{2})"
)


def rfc3339_parsed(value: object) -> datetime | None:
    """`value` as an aware datetime in UTC when it is an RFC 3339 time, else None (past the
    fraction's sixth digit the time is cut, as Python keeps microseconds)."""
    found = _RFC3339.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        return None
    fraction = (found["fraction"] or "")[:6]
    offset = "+00:00" if found["offset"] == "Z" else found["offset"]
    text = f"{found['date']}T{found['time']}{'.' + fraction.ljust(6, '0') if fraction else ''}{offset}"
    try:
        return datetime.fromisoformat(text).astimezone(UTC)
    except (ValueError, OverflowError):  # 2026-02-30, 25:00, or the first hours of year 1 once in UTC
        return None
