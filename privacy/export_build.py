"""Building an account's export in a worker (docs/privacy.md, "Export"): a ZIP of every section of
privacy/export_contents.py, each as JSON and as CSV, written a row at a time into a temporary file and
then saved to the default storage (the local disk or S3), so memory stays flat however long the
ledger. Its progress and heartbeat are written as it goes; once done, the owner is mailed the link.
An erasure committed while it is built marks it, and the ZIP is built again instead of being done.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from django.core.files import File
from django.core.files.storage import default_storage
from django.core.mail import send_mail
from django.db.models import Q
from django.utils import timezone

from lib.csvcells import spreadsheet_safe
from privacy.export_contents import Section, export_sections
from privacy.exports import STALE_AFTER, export_link
from privacy.models import EXPORT_LINK_VALIDITY, AccountExport

logger = logging.getLogger(__name__)

# Progress and the heartbeat are written every this many rows (JSON and CSV rows both count).
PROGRESS_ROWS = 5000
_RUNNING = AccountExport.Status.RUNNING
# Builds of one export, each started again because an erasure ran during the last; then it fails.
BUILDS = 3
ERASED_EACH_TIME = f"addresses were erased from the account during each of {BUILDS} builds; ask again"


class ExportAbandoned(Exception):
    """The export stopped being ours while it was built (failed as lost, or deleted with its account)."""


def export_build(*, export_id: str) -> None:
    """Claim the export (a conditional UPDATE: one worker wins), build and store its ZIP, mark it
    done and mail its link. An erasure while it was built makes it build again (up to BUILDS times).
    A failure is recorded on the export and logged, not raised."""
    export = _claimed(export_id)
    if export is None:
        return
    for _ in range(BUILDS):
        built = _built(export)
        if built is None:
            return
        if _done(export, *built):
            _mail(export)
            return
        default_storage.delete(built[0])
        if not _rebuild_started(export_id):
            return  # no longer ours (failed as lost, or deleted with its account)
    _failed(export_id, ERASED_EACH_TIME)


def _built(export: AccountExport) -> tuple[str, int, int] | None:
    """The stored ZIP (`_stored`), or None when the build was abandoned or failed (recorded)."""
    try:
        return _stored(export)
    except ExportAbandoned:
        return None
    except Exception as error:
        logger.exception("export %s failed", export.pk)
        _failed(export.pk, f"{type(error).__name__}: could not be built; ask again")
        return None


def _failed(export_id: str, failure: str) -> None:
    AccountExport.objects.filter(pk=export_id, status=_RUNNING).update(
        status=AccountExport.Status.FAILED, failure=failure[:255], finished_at=timezone.now()
    )


def _rebuild_started(export_id: str) -> bool:
    """An erasure marked it while it was built (privacy/exports.py `exports_erasure`): its ZIP, now
    deleted, could hold what went. Clear the mark before reading anything again, so that an erasure
    committed from now on marks it anew. False if it is not ours and marked."""
    now = timezone.now()
    return bool(
        AccountExport.objects.filter(pk=export_id, status=_RUNNING, rebuild_needed=True).update(
            rebuild_needed=False, rows_done=0, heartbeat_at=now
        )
    )


def _claimed(export_id: str) -> AccountExport | None:
    now = timezone.now()
    claimable = Q(status=AccountExport.Status.QUEUED) | Q(status=_RUNNING, heartbeat_at__lt=now - STALE_AFTER)
    # The erasure mark is cleared before the build reads anything: an erasure it misses marks it again.
    won = AccountExport.objects.filter(claimable, pk=export_id).update(
        status=_RUNNING, started_at=now, heartbeat_at=now, rows_done=0, rebuild_needed=False
    )
    return AccountExport.objects.select_related("account__owner", "requested_by").get(pk=export_id) if won else None


def _stored(export: AccountExport) -> tuple[str, int, int]:
    """Write the ZIP into a temporary file, then save it to storage: (its name there, its size, rows written)."""
    sections = export_sections(export.account)
    counts = {section.name: section.count() for section in sections}
    progress = _Progress(export, total=2 * sum(counts.values()))
    with tempfile.TemporaryFile() as spool:
        with zipfile.ZipFile(spool, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("README.txt", _readme(export, counts))
            for section in sections:
                with _entry(archive, f"{section.name}.json") as text:
                    _json_write(text, section, progress)
                with _entry(archive, f"{section.name}.csv") as text:
                    _csv_write(text, section, progress)
        size = spool.tell()
        spool.seek(0)
        name = default_storage.save(f"exports/{export.pk}.zip", File(spool, name=f"{export.pk}.zip"))
    return name, size, progress.done


@contextmanager
def _entry(archive: zipfile.ZipFile, name: str) -> Iterator[IO[str]]:
    """One file of the ZIP, written as UTF-8 text a piece at a time (compressed as it goes)."""
    with archive.open(name, "w", force_zip64=True) as raw, io.TextIOWrapper(raw, "utf-8", newline="") as text:
        yield text


def _json_write(text: IO[str], section: Section, progress: _Progress) -> None:
    """A JSON array of objects, one a line."""
    text.write("[")
    for number, record in enumerate(section.records()):
        text.write(("\n" if number == 0 else ",\n") + json.dumps(record, ensure_ascii=False))
        progress.row()
    text.write("\n]\n")


def _csv_write(text: IO[str], section: Section, progress: _Progress) -> None:
    """A header row, then a row each: null as empty, booleans true/false, formula-like cells quoted."""
    writer = csv.writer(text)
    writer.writerow(section.columns)
    for record in section.records():
        writer.writerow([_cell(value) for value in record.values()])
        progress.row()


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int) else spreadsheet_safe(str(value))  # -5 is a number, not a formula


class _Progress:
    def __init__(self, export: AccountExport, *, total: int) -> None:
        self.export_id, self.total, self.done = export.pk, total, 0
        AccountExport.objects.filter(pk=export.pk).update(rows_total=total)

    def row(self) -> None:
        self.done += 1
        if self.done % PROGRESS_ROWS == 0:
            written = AccountExport.objects.filter(pk=self.export_id, status=_RUNNING).update(
                rows_done=self.done, heartbeat_at=timezone.now()
            )
            if not written:
                raise ExportAbandoned


def _done(export: AccountExport, name: str, size: int, rows: int) -> bool:
    now = timezone.now()
    export.finished_at, export.link_expires_at = now, now + EXPORT_LINK_VALIDITY
    # Not done if an erasure marked it meanwhile (privacy/exports.py `exports_erasure`): built again.
    won = AccountExport.objects.filter(pk=export.pk, status=_RUNNING, rebuild_needed=False).update(
        status=AccountExport.Status.DONE,
        file_name=name,
        file_bytes=size,
        rows_done=rows,
        finished_at=export.finished_at,
        link_expires_at=export.link_expires_at,
    )
    return bool(won)


def _readme(export: AccountExport, counts: dict[str, int]) -> str:
    lines = [
        f"Everything account {export.account.public_id} ({export.account.email}) holds with the email",
        f"verification service, exported {timezone.now():%Y-%m-%d %H:%M} UTC (export {export.pk}).",
        "",
        "Each part twice: as JSON (an array of objects) and as CSV (a header row; empty for null).",
        "Times are UTC. API keys appear without their secret: only a hash of each is stored, and it",
        "is left out too. Jobs appear as their metadata; their addresses and verdicts are in each",
        "job's result files while the job keeps them. Reported outcomes appear without the address.",
        "",
        *(f"{name}.json / {name}.csv: {count:,} rows" for name, count in counts.items()),
    ]
    return "\n".join(lines) + "\n"


def _mail(export: AccountExport) -> None:
    """The link to the person who asked (the account's owner when a key asked), valid 24 h."""
    to = export.requested_by.email if export.requested_by is not None else export.account.email
    assert export.link_expires_at is not None
    body = (
        f"The export of your account's data you asked for is ready to download until "
        f"{export.link_expires_at:%Y-%m-%d %H:%M} UTC (24 hours):\n\n{export_link(export)}\n\n"
        "It is a ZIP of the account, its members, API keys (without their secrets), credit ledger, payments,\n"
        "audit log, jobs and reported outcomes, each as JSON and CSV. After 24 hours the file is deleted;\n"
        "ask for a new export on the Privacy page or with POST /v1/account/export.\n"
    )
    try:
        send_mail("Your account's data export is ready", body, None, [to])
    except OSError:  # the export stays downloadable from the portal and the API
        logger.exception("could not mail the link of export %s", export.pk)
