"""What stands for an address in the stores shared across accounts (docs/privacy.md, "Keep less").

An HMAC-SHA256 of the normalised address with the server's secret `VERIFIER_ADDRESS_PEPPER`: the
same address gives the same key, so an answer is still found again, but the tables hold no
address, and without the pepper a copy of them cannot be tested against a list of guesses.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
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
    inner, outer = _pads(settings.VERIFIER_ADDRESS_PEPPER)
    hashed = inner.copy()
    hashed.update(message)
    keyed = outer.copy()
    keyed.update(hashed.digest())
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


_BLOCK = hashlib.sha256().block_size  # 64 bytes


@functools.lru_cache(maxsize=4)
def _pads(pepper: str) -> tuple[hashlib._Hash, hashlib._Hash]:
    """HMAC-SHA256 (RFC 2104) with the pepper's two padded keys already hashed, made once per pepper
    (tests change it): each key copies the two hashes and feeds them the address, then the inner
    digest. Written out rather than through `hmac`, whose `HMAC.copy` builds a Python object around
    the two each time: the hashing took 1.7 µs, now 0.8 (`hmac.digest`, which sets up OpenSSL's
    context each call, 2.3), and a whole key 2.3 µs, now 1.7 (2026-11-29, timeit, best of seven). A
    bulk job keys every row at least once. The tests compare it with `hmac` on peppers shorter than,
    as long as and longer than the hash's block, and on non-ASCII ones."""
    key = pepper.encode()
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    return hashlib.sha256(bytes(b ^ 0x36 for b in key)), hashlib.sha256(bytes(b ^ 0x5C for b in key))


def address_keys(emails: Iterable[str]) -> dict[str, str]:
    """Each distinct address's key, by key: the way back from a row to the address asked."""
    return {address_key(email): email for email in emails}
