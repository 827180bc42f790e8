"""Callback signatures: `t=<unix>,v1=<hex>[,v1=<hex>]`, HMAC-SHA256 over f"{t}.{body}"."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence


def signature_digest(secret: str, timestamp: int, body: bytes) -> str:
    message = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(*, body: bytes, secrets: Sequence[str], timestamp: int) -> str:
    """One v1 per active secret, the current one first (see Account.active_signing_secrets)."""
    return ",".join([f"t={timestamp}", *(f"v1={signature_digest(s, timestamp, body)}" for s in secrets)])
