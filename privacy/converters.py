"""`<export_id:...>` in URLs: only a well-formed export id routes (as jobs/converters.py for jobs)."""

from __future__ import annotations

from django.urls import register_converter

from privacy.models import EXPORT_ID_PATTERN


class ExportIdConverter:
    regex = EXPORT_ID_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(ExportIdConverter, "export_id")
