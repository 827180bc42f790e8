"""A job's files, all through Django's default storage (local disk or S3).

    jobs/<job id>/input/<index>.csv          accepted addresses of one chunk, one per row
    jobs/<job id>/parts/<index>.a<n>.csv     result rows of one chunk (attempt n)
    jobs/<job id>/result-<token>.csv         the result file customers download

Parts and results carry an attempt number or a token in their names, so two
workers racing on the same chunk or job never overwrite each other's file: the
one that wins the conditional UPDATE records its name, the loser deletes its own.
"""

from __future__ import annotations

import csv
import io
import itertools
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.utils import timezone

from lib.tokens import random_base62
from verification.engine import Verdict

RESULT_COLUMNS = (
    "email",
    "status",
    "sub_status",
    "is_valid",
    "confidence",
    "score",
    "syntax_valid",
    "domain_valid",
    "mx_found",
    "smtp_valid",
    "is_disposable",
    "is_role_based",
    "is_catch_all",
    "is_free_provider",
    "did_you_mean",
    "mail_provider",
)
_CHECK_COLUMNS = RESULT_COLUMNS[6:14]
# A spreadsheet runs a cell starting with one of these as a formula.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_SPOOL_BYTES = 1024 * 1024


def input_folder(job_id: str) -> str:
    return f"jobs/{job_id}/input/"


def input_save(job_id: str, addresses: Sequence[str], chunk_size: int) -> str:
    """Store the addresses as one file per chunk of `chunk_size`; returns their folder.

    A chunk then reads only its own rows, also from S3, where a file is fetched whole.
    """
    folder = input_folder(job_id)
    try:
        for index, start in enumerate(range(0, len(addresses), chunk_size)):
            buffer = io.StringIO()
            csv.writer(buffer).writerows([address] for address in addresses[start : start + chunk_size])
            _save(_input_name(folder, index), io.BytesIO(buffer.getvalue().encode()))
    except BaseException:
        input_delete(folder)
        raise
    return folder


def input_rows(folder: str, index: int, count: int) -> list[str]:
    """The first `count` addresses of chunk `index`."""
    with default_storage.open(_input_name(folder, index), "rb") as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        return [row[0] for row in itertools.islice(csv.reader(text), count)]


def input_delete(folder: str) -> None:
    if default_storage.exists(folder):
        delete_quietly(*(folder + name for name in default_storage.listdir(folder)[1]))


def _input_name(folder: str, index: int) -> str:
    return f"{folder}{index:06d}.csv"


def part_save(job_id: str, index: int, attempt: int, verdicts: Sequence[Verdict]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerows(result_row(verdict) for verdict in verdicts)
    return _save(f"jobs/{job_id}/parts/{index:06d}.a{attempt}.csv", io.BytesIO(buffer.getvalue().encode()))


def result_assemble(job_id: str, part_names: Iterable[str]) -> str:
    """Header, then every part in upload order, copied through a spool file."""
    with tempfile.SpooledTemporaryFile(_SPOOL_BYTES) as spool:
        spool.write((",".join(RESULT_COLUMNS) + "\r\n").encode())
        for name in part_names:
            with default_storage.open(name, "rb") as part:
                shutil.copyfileobj(part, spool)
        return _save(f"jobs/{job_id}/result-{random_base62(8)}.csv", spool)


def result_row(verdict: Verdict) -> list[str]:
    checks = verdict.checks
    values: list[object] = [
        verdict.email,
        verdict.status.value,
        verdict.sub_status.value if verdict.sub_status else None,
        verdict.is_valid,
        verdict.confidence,
        verdict.score,
        *(getattr(checks, column) for column in _CHECK_COLUMNS),
        verdict.did_you_mean,
        verdict.mail_provider,
    ]
    return [_cell(value) for value in values]


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def delete_quietly(*names: str) -> None:
    for name in names:
        if name:
            default_storage.delete(name)


def _save(name: str, content: IO[bytes]) -> str:
    """Save under `name`, replacing what was there (S3 overwrites; the local disk would rename)."""
    content.seek(0)
    default_storage.delete(name)
    return default_storage.save(name, File(content, name=name))


# An upload still being stored is younger than this; an older folder without a job was left by a crash.
ORPHAN_AFTER = timedelta(hours=1)


def orphan_sweep(known_job_ids: Callable[[list[str]], set[str]]) -> list[str]:
    """Delete job folders that have no job row (an upload cut off mid-store) and are over an hour old.

    Also Django's temporary upload files (`*.upload*` in FILE_UPLOAD_TEMP_DIR) left by a web
    process killed mid-request. Returns what was deleted.
    """
    cutoff = timezone.now() - ORPHAN_AFTER
    folders = default_storage.listdir("jobs/")[0] if default_storage.exists("jobs/") else []
    known = set().union(*(known_job_ids(folders[i : i + 500]) for i in range(0, len(folders), 500)))
    deleted = []
    for folder in folders:
        names = list(_walk(f"jobs/{folder}/"))
        if folder not in known and names and max(default_storage.get_modified_time(n) for n in names) < cutoff:
            delete_quietly(*names)
            deleted.extend(names)
    return deleted + _sweep_upload_temp(cutoff)


def _walk(folder: str) -> Iterator[str]:
    subfolders, names = default_storage.listdir(folder)
    yield from (folder + name for name in names)
    for sub in subfolders:
        yield from _walk(f"{folder}{sub}/")


def _sweep_upload_temp(cutoff: datetime) -> list[str]:
    temp = Path(settings.FILE_UPLOAD_TEMP_DIR or tempfile.gettempdir())
    stale = [p for p in temp.glob("*.upload*") if p.is_file() and p.stat().st_mtime < cutoff.timestamp()]
    for path in stale:
        path.unlink(missing_ok=True)
    return [str(path) for path in stale]
