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
    """A mistyped VERIFIER_SMTP_EGRESS stops the start, not the first deep session; so does, in
    production with deep mode on, an EHLO name no mail server can look up (docs/deep.md, "Running
    deep mode on the internet"). DEBUG and the tests may say `localhost` to the farm on loopback."""
    from verification.engine.egress import EgressError, helo_names_checked, parse_egresses

    try:
        egresses = parse_egresses(settings.VERIFIER_SMTP_EGRESS)
        if settings.VERIFIER_DEEP_MODE and not settings.DEBUG:
            helo_names_checked(egresses, settings.VERIFIER_SMTP_HELO)
    except EgressError as exc:
        raise ImproperlyConfigured(str(exc)) from None
