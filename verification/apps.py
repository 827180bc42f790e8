from __future__ import annotations

from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from lib.schedules import keep_schedules


class VerificationConfig(AppConfig):
    name = "verification"

    def ready(self) -> None:
        from verification import queue

        _egresses_checked()
        keep_schedules(self, *queue.SCHEDULES)


def _egresses_checked() -> None:
    """A mistyped VERIFIER_SMTP_EGRESS stops the start, not the first deep session."""
    from verification.engine.egress import EgressError, parse_egresses

    try:
        parse_egresses(settings.VERIFIER_SMTP_EGRESS)
    except EgressError as exc:
        raise ImproperlyConfigured(str(exc)) from None
