"""`<verification_id:...>` in URLs: only a well-formed verification id routes, anything else is the
404 of the path, so a path holding NUL or junk never reaches a database query (as jobs/converters.py)."""

from __future__ import annotations

from django.urls import register_converter

from verification.models.retried import VERIFICATION_ID_PATTERN


class VerificationIdConverter:
    regex = VERIFICATION_ID_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(VerificationIdConverter, "verification_id")
