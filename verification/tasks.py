"""django-q2 entry points of the verification app."""

from __future__ import annotations

from lib import prune


def prune_expired() -> dict[str, int]:
    """Hourly: delete expired verdict-cache, domain-cache and idempotency rows, and any other model's
    rows with an indexed `expires_at` (lib/prune.py)."""
    return prune.prune_expired()
