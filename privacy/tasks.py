"""Privacy's queued work: thin entry points that take ids and call the export's domain code."""

from __future__ import annotations

from django.utils import timezone

from privacy.export_build import export_build
from privacy.exports import export_files_expire


def build_export(export_id: str) -> None:
    export_build(export_id=export_id)


def expire_export_files() -> int:
    """Hourly: the ZIPs whose 24 h link has lapsed are deleted."""
    return export_files_expire(now=timezone.now())
