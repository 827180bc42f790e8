"""Reading an uploaded address list: plain Python, no Django.

The file is read as a stream (Django has already spooled a big upload to disk),
once in the common case: only a file that turns out not to be UTF-8 is read a
second time, as Windows-1252. Only the accepted addresses are kept in memory.
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import re
from collections.abc import Iterable, Iterator
from typing import IO

from verification.engine.syntax import normalise

# The contract's limits for one bulk file (CONTRACT.md section 5). The upload size is
# the size of the file part itself, not of the multipart body around it.
MAX_UPLOAD_BYTES = 25 * 1024 * 1024
MAX_ROWS = 100_000

DELIMITERS = ",;\t"
_SNIFF_LINES = 50
_SNIFF_CHARS = 64 * 1024
# Text never holds NUL or other C0 controls (tab, CR, LF, FF aside): such bytes mean binary.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")


class CsvFileError(Exception):
    """The file cannot be accepted; `code` is the contract's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def read_addresses(stream: IO[bytes], *, max_rows: int = MAX_ROWS) -> list[str]:
    """Unique normalised addresses in upload order. Raises CsvFileError."""
    encoding = _encoding_from_bom(stream)
    # Anything that is not UTF-8 is read as Windows-1252: a second pass, from the start.
    fallbacks = ["cp1252"] if encoding == "utf-8" else []
    for attempt in [encoding, *fallbacks]:
        try:
            addresses = _read(stream, attempt, max_rows)
        except UnicodeDecodeError:
            continue
        if not addresses:
            raise CsvFileError("invalid_file", "The file has no address rows.")
        return addresses
    raise CsvFileError("invalid_file", "The file is not a text (CSV) file.")


def _encoding_from_bom(stream: IO[bytes]) -> str:
    stream.seek(0)
    head = stream.read(4)
    stream.seek(0)
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    return "utf-8"


def _read(stream: IO[bytes], encoding: str, max_rows: int) -> list[str]:
    stream.seek(0)
    text = io.TextIOWrapper(stream, encoding=encoding, newline="")
    try:
        return _unique(_address_rows(_checked_lines(text), max_rows))
    except csv.Error as exc:
        raise CsvFileError("invalid_file", f"The file is not a readable CSV file: {exc}.") from None
    finally:
        text.detach()  # leave the upload open for its owner


def _checked_lines(text: Iterable[str]) -> Iterator[str]:
    for line in text:
        if _CONTROL.search(line):
            raise CsvFileError("invalid_file", "The file is not a text (CSV) file.")
        yield line


def _address_rows(lines: Iterator[str], max_rows: int) -> Iterator[str]:
    """Raw address cells, header skipped and blank rows ignored; at most `max_rows`."""
    sample = list(itertools.islice(lines, _SNIFF_LINES))
    rows = (
        row for row in csv.reader(itertools.chain(sample, lines), delimiter=sniff_delimiter(sample)) if _filled(row)
    )
    first = next(rows, None)
    if first is None:
        return
    column = _email_column(first)
    count = 0
    for row in rows if column is not None else itertools.chain([first], rows):
        cell = row[column or 0] if len(row) > (column or 0) else ""
        if not cell.strip():
            continue
        count += 1
        if count > max_rows:
            raise CsvFileError("too_many_rows", f"The file has more than {max_rows:,} address rows.")
        yield cell


def sniff_delimiter(lines: list[str]) -> str:
    """Comma, semicolon or tab: whichever the sample's lines use most consistently."""
    sample = "".join(lines)[:_SNIFF_CHARS]
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        first = next((line for line in lines if line.strip()), "")
        counts = {d: first.count(d) for d in DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return best if counts[best] else ","


def _filled(row: list[str]) -> bool:
    return any(cell.strip() for cell in row)


def _email_column(header: list[str]) -> int | None:
    for index, name in enumerate(header):
        if name.strip().lower() == "email":
            return index
    return None


def _unique(cells: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(normalise(cell) for cell in cells))
