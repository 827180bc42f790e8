"""What an authenticator app does: the RFC 6238 code for a base32 secret (django-otp's own HOTP)."""

from __future__ import annotations

import base64
import time
from datetime import UTC, datetime

from django_otp.oath import hotp

STEP = 30


def totp_code(secret: str, *, seconds_ahead: float = 0) -> str:
    """The code an app shows now, or `seconds_ahead` from now (the next step is accepted too)."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    return f"{hotp(key, int((time.time() + seconds_ahead) // STEP)):06d}"


def next_step_starts() -> datetime:
    """When the next TOTP step begins. A code of that step is fresh whatever the last accepted one,
    and inside the window however django-otp's drift was set at enrolment (a code made just before a
    step's end and checked just after it leaves the device one step behind)."""
    return datetime.fromtimestamp((int(time.time()) // STEP + 1) * STEP, UTC)
