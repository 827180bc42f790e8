"""CSV cells a spreadsheet opens safely."""

from __future__ import annotations

# A spreadsheet runs a cell starting with one of these as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """Text that starts like a formula, quoted so that a spreadsheet shows it instead of running it."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text
