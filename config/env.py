"""Small typed readers for settings that come from the environment.

Each one fails loudly on a value it cannot parse, so a typo in a deployment
stops the process at start-up instead of silently falling back to a default.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def envstr(name: str, default: str) -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def envint(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _envnumber(name, int, "an integer")
    if value is None:
        return default
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    return value


def envfloat(name: str, default: float, *, minimum: float = 0.0) -> float:
    value = _envnumber(name, float, "a number")
    if value is None:
        return default
    if value <= minimum:
        raise ImproperlyConfigured(f"{name} must be > {minimum}, got {value}")
    return value


def _envnumber[N: (int, float)](name: str, parse: Callable[[str], N], kind: str) -> N | None:
    """The variable parsed with `parse`; None when it is unset or blank."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        return parse(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be {kind}, got {raw!r}") from None


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def envdurations(name: str, default: str) -> tuple[int, ...]:
    """Comma-separated durations (`30s`, `5m`, `1h`, `2d`) as seconds, in order; blank: the default.
    Each must be a whole positive number with its unit."""
    raw = os.environ.get(name, "")
    text = raw if raw.strip() else default
    seconds = []
    for item in (part.strip() for part in text.split(",")):
        number, unit = item[:-1], item[-1:]
        if not number.isdigit() or unit not in _UNITS or int(number) <= 0:
            message = f"{name} must be comma-separated durations such as 5m,1h (units s, m, h, d), got {raw!r}"
            raise ImproperlyConfigured(message)
        seconds.append(int(number) * _UNITS[unit])
    return tuple(seconds)


def envlist(name: str, default: list[str] | None = None) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default or [])
    return [item.strip() for item in raw.split(",") if item.strip()]
