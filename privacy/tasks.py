"""Privacy's queued work: thin entry points that take ids and call the export's domain code."""

from __future__ import annotations

from django.utils import timezone

from privacy.export_build import export_build
from privacy.exports import export_files_expire, export_orphans_sweep


def build_export(export_id: str) -> None:
    export_build(export_id=export_id)


def expire_export_files() -> int:
    """Hourly: the ZIPs whose 24 h link has lapsed are deleted, and any a lost worker left unnamed.
    Returns how many went."""
    now = timezone.now()
    return export_files_expire(now=now) + export_orphans_sweep(now=now)
