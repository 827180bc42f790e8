"""Random tokens and their hashes: API keys, signing secrets, job ids."""

from __future__ import annotations

import hashlib
import secrets
import string

BASE62 = string.ascii_letters + string.digits


def random_base62(length: int) -> str:
    return "".join(secrets.choice(BASE62) for _ in range(length))


def sha256_hex(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()
