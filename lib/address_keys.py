"""What stands for an address in the stores shared across accounts (docs/privacy.md, "Keep less").

An HMAC-SHA256 of the normalised address with the server's secret `VERIFIER_ADDRESS_PEPPER`: the
same address gives the same key, so an answer is still found again, but the tables hold no
address, and without the pepper a copy of them cannot be tested against a list of guesses.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
from collections.abc import Iterable, Iterator
from contextvars import ContextVar

from django.conf import settings

KEY_LENGTH = 64  # hex digits of a SHA-256


# Within `remembered()`: each address's key, computed once.
_memo: ContextVar[dict[str, str] | None] = ContextVar("address_keys_memo", default=None)


def address_key(email: str) -> str:
    memo = _memo.get()
    if memo is None:
        return _keyed(email)
    key = memo.get(email)
    if key is None:
        key = memo[email] = _keyed(email)
    return key


def _keyed(email: str) -> str:
    # The engine's normalisation (verification/engine/syntax.py `normalise`): trimmed, lower case.
    message = email.strip().lower().encode("utf-8", "surrogatepass")
    keyed = _prepared(settings.VERIFIER_ADDRESS_PEPPER).copy()
    keyed.update(message)
    return keyed.hexdigest()


HEAD_DIGITS = 15  # 60 bits: a positive 64-bit integer in every database


def key_head(key: str) -> int:
    """A key's first 60 bits as a number: what an index over many keys holds in its place, an eighth
    of the 64 characters (billing.ValidAnswer). Rows found through it still compare the whole key."""
    return int(key[:HEAD_DIGITS], 16)


@contextlib.contextmanager
def remembered() -> Iterator[None]:
    """Each address's key computed once within, and forgotten on leaving: a bulk worker's batch asks for
    every row's key up to five times (objections, the mailbox answers, reported outcomes, the bounce
    guarantee, the stores written after the job), and the HMAC is most of what each costs."""
    token = _memo.set({})
    try:
        yield
    finally:
        _memo.reset(token)


@functools.lru_cache(maxsize=4)
def _prepared(pepper: str) -> hmac.HMAC:
    """The HMAC with the pepper's key already absorbed, made once per pepper (tests change it): each
    key copies it rather than encoding the pepper and hashing its two pads again."""
    return hmac.new(pepper.encode(), digestmod=hashlib.sha256)


def address_keys(emails: Iterable[str]) -> dict[str, str]:
    """Each distinct address's key, by key: the way back from a row to the address asked."""
    return {address_key(email): email for email in emails}
