"""A job's files, all through Django's default storage (local disk or S3).

    jobs/<job id>/input.csv                  accepted addresses, one per row
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
from collections.abc import Iterable, Sequence
from typing import IO

from django.core.files import File
from django.core.files.storage import default_storage

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
)
_CHECK_COLUMNS = RESULT_COLUMNS[6:14]
# A spreadsheet runs a cell starting with one of these as a formula.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_SPOOL_BYTES = 1024 * 1024


def input_name(job_id: str) -> str:
    return f"jobs/{job_id}/input.csv"


def input_save(job_id: str, addresses: Iterable[str]) -> str:
    with tempfile.SpooledTemporaryFile(_SPOOL_BYTES) as spool:
        text = io.TextIOWrapper(spool, encoding="utf-8", newline="")
        csv.writer(text).writerows([address] for address in addresses)
        text.flush()
        text.detach()
        return _save(input_name(job_id), spool)


def input_slice(name: str, start: int, size: int) -> list[str]:
    """Rows [start, start + size) of an input file, streamed, not loaded whole."""
    with default_storage.open(name, "rb") as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        return [row[0] for row in itertools.islice(csv.reader(text), start, start + size)]


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
    checks = verdict.to_dict()["checks"]
    values: list[object] = [
        verdict.email,
        verdict.status.value,
        verdict.sub_status.value if verdict.sub_status else None,
        verdict.is_valid,
        verdict.confidence,
        verdict.score,
        *(checks[column] for column in _CHECK_COLUMNS),
        verdict.did_you_mean,
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
