"""How many deep verifications one account may have waiting on mail servers at once.

A deep request holds a web thread for as long as the slowest MX takes (up to 2 x the SMTP step
timeout + 5 s). Without a cap, one account pointing requests at a tarpit could hold every thread
of the web tier. With it, an account's own deep requests beyond `VERIFIER_DEEP_REQUESTS_PER_ACCOUNT`
are refused at once (`429 too_many_deep_requests`, `Retry-After`), and the rest of the tier stays
free for everyone else (docs/deep.md, "One slow mail server costs only the customer who asked").

Slots are cache keys taken with `add` (Redis `SET NX`, or an INSERT in the database cache): shared
by every web process that shares the cache, and each expires on its own a little after the
longest a request can take, so a killed process cannot keep one.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator

from django.conf import settings
from django.core.cache import cache

from lib.errors import DomainError
from verification.deep import single_request_seconds

# Each slot's cache key: this, the account's id, ":" and the slot's number.
SLOT_KEY_PREFIX = "deep-request:"


class TooManyDeepRequests(DomainError):
    code = "too_many_deep_requests"
    param = "validation_mode"
    retry_after = 5

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"This account already has {limit} deep verifications waiting on mail servers; "
            f"retry in {self.retry_after} s, or use fast mode."
        )


@contextlib.contextmanager
def deep_request_slot(*, account_id: int) -> Iterator[None]:
    """Hold one of the account's deep slots for the block, or raise TooManyDeepRequests at once."""
    limit = settings.VERIFIER_DEEP_REQUESTS_PER_ACCOUNT
    token = secrets.token_hex(8)
    lifetime = int(single_request_seconds()) + 10
    for slot in range(limit):
        key = f"{SLOT_KEY_PREFIX}{account_id}:{slot}"
        if cache.add(key, token, timeout=lifetime):
            break
    else:
        raise TooManyDeepRequests(limit)
    try:
        yield
    finally:
        if cache.get(key) == token:
            cache.delete(key)
