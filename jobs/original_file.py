"""The "with your columns" result file (docs/bulk.md, "Filtered downloads"): every address row of the
upload, in upload order, its cells and then its address's verdict; a row repeating an earlier row's
address (jobs/csvfile.py keeps them, input/later.rows) with that verdict and the first row's number.
Read from the job's stored input and result parts (jobs/files.py), written through a spool file."""

from __future__ import annotations

import csv
import io
import itertools
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO

from django.core.files.storage import default_storage

from jobs import files, result_rows
from jobs.csvfile import LaterRow, later_rows_read
from lib.tokens import random_base62


def original_header(columns: Sequence[str]) -> list[str]:
    """The customer's columns, every result column prefixed `verifier_`, then `duplicate_of_row`
    (docs/bulk.md, "Filtered downloads")."""
    return [*columns, *(f"verifier_{column}" for column in result_rows.RESULT_COLUMNS), "duplicate_of_row"]


def original_assemble(
    job_id: str,
    columns: Sequence[str],
    input_name: str,
    parts: Iterable[tuple[int, str]],
    *,
    starts: Sequence[int] = (),
    grouped: str = "",
    total: int = 0,
) -> str:
    """Every address row of the upload (cells neutralised), in upload order, then its address's verdict
    and, for a row repeating an earlier row's address, that row's number. `parts` are (index, part
    name) and `starts` each chunk's first position; `grouped`, `total` as for result_assemble."""

    def rows() -> Iterator[list[str]]:
        yield [result_rows.cell(name) for name in original_header(columns)]
        if grouped:
            joined = _joined_in_input_order(input_name, parts, grouped, total)
        else:
            joined = _joined(input_name, parts, starts)
        for original, verdict, first_row in _every_row(joined, input_name):
            yield [*_padded(original, len(columns)), *verdict, str(first_row or "")]

    return files.csv_save(f"jobs/{job_id}/original-{random_base62(8)}.csv", rows())


# An address's position among the upload's unique addresses, its first row's cells, its verdict's.
_Joined = tuple[int, list[str], list[str]]


def _joined(input_name: str, parts: Iterable[tuple[int, str]], starts: Sequence[int]) -> Iterator[_Joined]:
    """Each processed address's position, original cells and result cells, part by part."""
    for index, name in parts:
        verdicts = files.csv_rows(name)
        originals = files.input_originals(input_name, index, len(verdicts))
        for offset, (original, verdict) in enumerate(zip(originals, verdicts, strict=True)):
            yield starts[index] + offset, original, verdict


def _joined_in_input_order(
    input_name: str, parts: Iterable[tuple[int, str]], grouped: str, total: int
) -> Iterator[_Joined]:
    """The same for a grouped job: its results put back in input order, its originals read in it."""
    originals, at = files.in_order(files.input_originals, input_name, total), 0
    for position, line in files.lines_in_input_order(parts, grouped, total):
        original = next(itertools.islice(originals, position - at, None))
        at = position + 1
        yield position, original, next(csv.reader(io.StringIO(line.decode(), newline="")))


def _every_row(joined: Iterable[_Joined], input_name: str) -> Iterator[tuple[list[str], list[str], int]]:
    """Each processed address's first row and verdict (`joined`, in upload order) with the rows repeating
    an address put back in their places, each with its address's verdict and first row's number (0 for
    a first row). A repeating row goes after as many first rows as there are address rows before it,
    less the repeating ones. The verdicts such a row needs wait in a temporary file, not in memory; a
    row whose address was not processed (a partial job) is left out, as its first row is."""
    later = _later_rows(input_name)
    wanted = {row.unique_at for row in later()}
    if not wanted:
        yield from ((original, verdict, 0) for _, original, verdict in joined)
        return
    with tempfile.TemporaryFile() as kept:
        spans: dict[int, tuple[int, int]] = {}
        rows = enumerate(later())
        ordinal, row = next(rows, (0, None))
        for index, original, verdict in joined:
            while row is not None and row.place - ordinal <= index:  # it comes before this first row
                if row.unique_at in spans:
                    yield row.cells, _kept_read(kept, spans[row.unique_at]), row.first_row
                ordinal, row = next(rows, (0, None))
            if index in wanted:
                spans[index] = (kept.seek(0, io.SEEK_END), kept.write(json.dumps(verdict).encode()))
            yield original, verdict, 0
        for _, left in itertools.chain([(ordinal, row)] if row else [], rows):
            if left.unique_at in spans:
                yield left.cells, _kept_read(kept, spans[left.unique_at]), left.first_row


def _kept_read(kept: IO[bytes], span: tuple[int, int]) -> list[str]:
    kept.seek(span[0])
    verdict: list[str] = json.loads(kept.read(span[1]))
    return verdict


def _later_rows(input_name: str) -> Callable[[], Iterator[LaterRow]]:
    """A reader of the upload's rows repeating an address (none for a job stored before they were kept)."""
    name = files.later_name(input_name)
    present = default_storage.exists(name)

    def read() -> Iterator[LaterRow]:
        if present:
            with default_storage.open(name, "rb") as raw:
                yield from later_rows_read(raw)

    return read


def _padded(cells: list[str], width: int) -> list[str]:
    return [result_rows.cell(cell) for cell in (cells + [""] * width)[:width]]
