"""Amounts of money as a customer reads them."""

from __future__ import annotations


def dollars(cents: int, *, short: bool = False) -> str:
    """ "$3,000.00", or "$3,000" when `short` and whole."""
    whole, rest = divmod(cents, 100)
    return f"${whole:,}" if short and not rest else f"${whole:,}.{rest:02d}"
