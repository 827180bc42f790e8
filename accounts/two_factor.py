"""Two-factor sign-in with django-otp: a TOTP device (RFC 6238) and a static device holding 10
single-use recovery codes. How it is used: docs/portal.md, "Two-factor sign-in"."""

from __future__ import annotations

import base64
from typing import Any

from django.db import transaction
from django_otp import devices_for_user, user_has_device
from django_otp.models import Device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

RECOVERY_CODES = 10
APP_DEVICE = "Authenticator app"
RECOVERY_DEVICE = "Recovery codes"


def has_two_factor(user: Any) -> bool:
    return bool(user.is_authenticated and user_has_device(user, confirmed=True))


def totp_pending(user: Any) -> TOTPDevice:
    """The app device being enrolled: made once, shown until a code from it confirms it."""
    device, _ = TOTPDevice.objects.get_or_create(user=user, confirmed=False, defaults={"name": APP_DEVICE})
    return device


def totp_secret(device: TOTPDevice) -> str:
    """The secret as authenticator apps take it typed in: base32, no padding."""
    return base64.b32encode(device.bin_key).decode().rstrip("=")


def two_factor_enable(*, user: Any, device: TOTPDevice, code: str) -> list[str] | None:
    """Confirm `device` with a code from the app; returns the new recovery codes (shown once), or
    None for a wrong code."""
    if device.confirmed or not device.verify_token(code):
        return None
    with transaction.atomic():
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        StaticDevice.objects.filter(user=user).delete()
        recovery = StaticDevice.objects.create(user=user, name=RECOVERY_DEVICE, confirmed=True)
        codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
        StaticToken.objects.bulk_create(StaticToken(device=recovery, token=code) for code in codes)
    return codes


def two_factor_match(user: Any, code: str) -> Device | None:
    """The confirmed device `code` is good for (an app code, or a recovery code, which is used up)."""
    code = "".join(code.split())
    for device in devices_for_user(user, confirmed=True):
        if device.verify_token(code):
            return device
    return None


def two_factor_disable(*, user: Any) -> None:
    with transaction.atomic():
        TOTPDevice.objects.filter(user=user).delete()
        StaticDevice.objects.filter(user=user).delete()
