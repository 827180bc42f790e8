"""Verify a callback from the service, with either of the signatures every callback carries.

`verify_callback(body, headers, secret)` checks the Standard Webhooks signature (`webhook-id`,
`webhook-timestamp`, `webhook-signature`) when the headers have it, else `X-Service-Signature`;
it returns the parsed payload, or raises CallbackVerificationError. `body` must be the raw bytes
as received, before any JSON parsing. During the 24 hours after a secret rotation a callback
carries one signature per secret: either secret verifies it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

TOLERANCE_SECONDS = 300


class CallbackVerificationError(Exception):
    pass


def verify_callback(
    body: bytes,
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> Any:
    lower = {name.lower(): value for name, value in headers.items()}
    if "webhook-signature" in lower:
        timestamp, ok = _standard(body, lower, secret)
    elif "x-service-signature" in lower:
        timestamp, ok = _ours(body, lower["x-service-signature"], secret)
    else:
        raise CallbackVerificationError("no signature header")
    if abs((now if now is not None else time.time()) - timestamp) > tolerance:
        raise CallbackVerificationError("the signature's timestamp is outside the tolerance")
    if not ok:
        raise CallbackVerificationError("no signature matches this secret")
    return json.loads(body)


def _standard(body: bytes, headers: Mapping[str, str], secret: str) -> tuple[int, bool]:
    event_id, timestamp = headers.get("webhook-id", ""), _integer(headers.get("webhook-timestamp", ""))
    key = base64.b64decode(secret.removeprefix("whsec_") + "==")
    expected = hmac.new(key, f"{event_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    candidates = [part.partition(",") for part in headers["webhook-signature"].split(" ")]
    return timestamp, any(
        version == "v1" and hmac.compare_digest(expected, _b64(signature)) for version, _, signature in candidates
    )


def _ours(body: bytes, header: str, secret: str) -> tuple[int, bool]:
    items = [item.strip().partition("=") for item in header.split(",")]
    timestamp = next((_integer(value) for name, _, value in items if name == "t"), None)
    if timestamp is None:
        raise CallbackVerificationError("X-Service-Signature has no timestamp")
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return timestamp, any(name == "v1" and hmac.compare_digest(expected, value) for name, _, value in items)


def _integer(value: str) -> int:
    if not value.isdigit():
        raise CallbackVerificationError(f"not a timestamp: {value!r}")
    return int(value)


def _b64(value: str) -> bytes:
    try:
        return base64.b64decode(value)
    except ValueError:
        return b""
