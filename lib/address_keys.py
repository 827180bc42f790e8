"""What stands for an address in the stores shared across accounts (docs/privacy.md, "Keep less").

An HMAC-SHA256 of the normalised address with the server's secret `VERIFIER_ADDRESS_PEPPER`: the
same address gives the same key, so an answer is still found again, but the tables hold no
address, and without the pepper a copy of them cannot be tested against a list of guesses.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Iterable

from django.conf import settings

KEY_LENGTH = 64  # hex digits of a SHA-256


def address_key(email: str) -> str:
    # The engine's normalisation (verification/engine/syntax.py `normalise`): trimmed, lower case.
    message = email.strip().lower().encode("utf-8", "surrogatepass")
    keyed = _prepared(settings.VERIFIER_ADDRESS_PEPPER).copy()
    keyed.update(message)
    return keyed.hexdigest()


@functools.lru_cache(maxsize=4)
def _prepared(pepper: str) -> hmac.HMAC:
    """The HMAC with the pepper's key already absorbed, made once per pepper (tests change it): each
    key copies it rather than encoding the pepper and hashing its two pads again."""
    return hmac.new(pepper.encode(), digestmod=hashlib.sha256)


def address_keys(emails: Iterable[str]) -> dict[str, str]:
    """Each distinct address's key, by key: the way back from a row to the address asked."""
    return {address_key(email): email for email in emails}
