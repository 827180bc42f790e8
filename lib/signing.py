"""Callback signatures: `t=<unix>,v1=<hex>[,v1=<hex>]`, HMAC-SHA256 over f"{t}.{body}"; short signed
tokens for links we mail."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Sequence
from datetime import timedelta

from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.http import base36_to_int
from django.utils.http import int_to_base36 as base36


def signature_digest(secret: str, timestamp: int, body: bytes) -> str:
    message = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(*, body: bytes, secrets: Sequence[str], timestamp: int) -> str:
    """One v1 per active secret, the current one first (see Account.active_signing_secrets)."""
    return ",".join([f"t={timestamp}", *(f"v1={signature_digest(s, timestamp, body)}" for s in secrets)])


def short_token(salt: str, value: str) -> str:
    """`value` with a timestamp and an HMAC (SECRET_KEY, `salt`): short enough for a link that fits
    on one line of a plain-text mail (lines over 78 characters get quoted-printable soft breaks)."""
    stamped = f"{value}.{base36(int(time.time()))}"
    return f"{stamped}.{_mac(salt, stamped)}"


def short_token_value(salt: str, token: str, *, max_age: timedelta) -> str | None:
    """The value a `short_token` holds; None when it was not made by us or is older than `max_age`."""
    stamped, _, mac = token.rpartition(".")
    value, _, stamp = stamped.rpartition(".")
    if not value or not constant_time_compare(mac, _mac(salt, stamped)):
        return None
    try:
        made = base36_to_int(stamp)
    except ValueError:
        return None
    return value if time.time() - made <= max_age.total_seconds() else None


def _mac(salt: str, value: str) -> str:
    digest = salted_hmac(salt, value, algorithm="sha256").digest()
    return base64.urlsafe_b64encode(digest[:16]).decode().rstrip("=")
