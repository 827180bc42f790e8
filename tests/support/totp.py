"""What an authenticator app does: the RFC 6238 code for a base32 secret (django-otp's own HOTP)."""

from __future__ import annotations

import base64
import time

from django_otp.oath import hotp

STEP = 30


def totp_code(secret: str, *, seconds_ahead: float = 0) -> str:
    """The code an app shows now, or `seconds_ahead` from now (the next step is accepted too)."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    return f"{hotp(key, int((time.time() + seconds_ahead) // STEP)):06d}"
