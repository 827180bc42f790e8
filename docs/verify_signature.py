"""Verify a bulk-job callback from the email verification service.

Standard library only: copy this into your receiver. Call it with the raw request
body (bytes, exactly as received, before any JSON parsing), the value of the
`X-Service-Signature` header and your signing secret (`whsec_...`).
"""

from __future__ import annotations

import hashlib
import hmac
import time

TOLERANCE_SECONDS = 300  # reject callbacks signed more than 5 minutes ago


def verify_signature(body: bytes, header: str, secret: str, now: float | None = None) -> bool:
    timestamp, signatures = None, []
    for item in header.split(","):
        key, _, value = item.strip().partition("=")
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1":
            signatures.append(value)
    if timestamp is None or abs((now or time.time()) - timestamp) > TOLERANCE_SECONDS:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    # After a secret rotation a callback carries one v1 per active secret: any match will do.
    return any(hmac.compare_digest(expected, candidate) for candidate in signatures)
