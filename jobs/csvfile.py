"""Reading an uploaded address list: plain Python, no Django.

The file is read as a stream (Django has already spooled a big upload to disk),
once in the common case: only a file that turns out not to be UTF-8 is read a
second time, as Windows-1252. Only the accepted addresses are kept in memory.
"""

from __future__ import annotations

import _csv
import codecs
import csv
import io
import itertools
import re
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, NamedTuple

from verification.engine.syntax import normalise

# The contract's limits for one bulk file (docs/bulk.md, "Upload"). The upload size is
# the size of the file part itself, not of the multipart body around it.
MAX_UPLOAD_BYTES = 25 * 1024 * 1024
MAX_ROWS = 100_000
# Wider rows are refused: the header is stored with the job, and a million-column one made every
# read of the job slow (jobs/models.py keeps it out of the default queries too).
MAX_COLUMNS = 1_000

DELIMITERS = ",;\t"
_SNIFF_LINES = 50
_SNIFF_CHARS = 64 * 1024
# The email column is found in the first rows (docs/bulk.md, "Upload").
_DETECT_ROWS = 100
# In order of preference: a file with both `E-Mail` and `email` columns means `email`.
EMAIL_HEADERS = ("email", "e-mail", "email address", "email_address", "mail")
# Text never holds NUL or other C0 controls (tab, CR, LF, FF aside): such bytes mean binary.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")


class CsvFileError(Exception):
    """The file cannot be accepted; `code` is the contract's error code, `param` the part at fault."""

    def __init__(self, code: str, message: str, param: str = "file") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param


# Spooled in memory up to this size, on disk beyond: the rows that repeat an address.
_SPOOL_BYTES = 1024 * 1024


@dataclass
class AddressList:
    """What an upload holds: its unique addresses, each with the original row it first appeared on,
    and the later rows that repeat one of them (`later_rows`, see `LaterRows`)."""

    addresses: list[str]  # unique, normalised, in upload order
    originals: list[str]  # the original row of each address, as one comma-separated CSV line
    columns: list[str]  # the header's names, or column_1, column_2, ... without a header row
    has_header: bool
    email_column: int  # 0-based
    rows: int  # address rows before de-duplication
    later_rows: LaterRows = field(default_factory=lambda: LaterRows())

    @property
    def duplicates(self) -> int:
        return self.rows - len(self.addresses)


class LaterRows:
    """The rows that repeat an earlier row's address, in upload order, spooled (to disk when large):
    the "with your columns" result gives every row back (docs/bulk.md, "Filtered downloads").

    One record a row, records separated by NUL (never in an accepted file), each
    `<its place among the address rows>\t<its address's index>\t<the first row's number>\t<its CSV line>`.
    """

    def __init__(self) -> None:
        # Kept open while the list is: closed when it is collected, deleted with it.
        self.file: IO[bytes] = tempfile.SpooledTemporaryFile(_SPOOL_BYTES)  # noqa: SIM115
        self.count = 0

    def add(self, place: int, index: int, first_row: int, line: str) -> None:
        self.file.write(f"{place}\t{index}\t{first_row}\t{line}\0".encode("utf-8", "surrogatepass"))
        self.count += 1


class LaterRow(NamedTuple):
    place: int  # 0-based, among the upload's address rows
    unique_at: int  # the address's index among the unique addresses
    first_row: int  # the number of the address's first row in the file (the header is row 1)
    cells: list[str]


def later_rows_read(stream: IO[bytes]) -> Iterator[LaterRow]:
    """The records `LaterRows` wrote, read a block at a time."""
    rest = b""
    for block in iter(lambda: stream.read(_SPOOL_BYTES), b""):
        *records, rest = (rest + block).split(b"\0")
        yield from map(_later_row, records)
    if rest:
        yield _later_row(rest)


def _later_row(record: bytes) -> LaterRow:
    place, index, first_row, line = record.decode("utf-8", "surrogatepass").split("\t", 3)
    return LaterRow(int(place), int(index), int(first_row), next(csv.reader([line]), []))


def read_addresses(stream: IO[bytes], *, max_rows: int = MAX_ROWS) -> list[str]:
    """Unique normalised addresses in upload order. Raises CsvFileError."""
    return read_list(stream, max_rows=max_rows).addresses


def read_list(stream: IO[bytes], *, email_column: str | None = None, max_rows: int = MAX_ROWS) -> AddressList:
    """Read the whole upload (docs/bulk.md, "Upload"). Raises CsvFileError."""
    encoding = _encoding_from_bom(stream)
    # Anything that is not UTF-8 is read as Windows-1252: a second pass, from the start.
    fallbacks = ["cp1252"] if encoding == "utf-8" else []
    for attempt in [encoding, *fallbacks]:
        try:
            found = _read(stream, attempt, _Reader(email_column, max_rows))
        except UnicodeDecodeError:
            continue
        if not found.addresses:
            raise CsvFileError("invalid_file", "The file has no address rows.")
        return found
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


def _read(stream: IO[bytes], encoding: str, reader: _Reader) -> AddressList:
    stream.seek(0)
    # In UTF-8 and Windows-1252 a control character is its byte: whole blocks are checked, not lines.
    by_bytes = encoding != "utf-16"
    binary = io.BufferedReader(_TextBytes(stream), _BLOCK_BYTES) if by_bytes else stream
    text = io.TextIOWrapper(binary, encoding=encoding, newline="")
    try:
        return reader.read(_Lines(text, checked=by_bytes))
    except csv.Error as exc:
        raise CsvFileError(
            "invalid_file", f"The file is not a readable CSV file: row {reader.row_number}: {exc}."
        ) from None
    finally:
        text.detach()  # leave the upload open for its owner


def _not_text() -> CsvFileError:
    return CsvFileError("invalid_file", "The file is not a text (CSV) file.")


# The bytes of the control characters text never holds (_CONTROL), and every other byte.
_CONTROL_BYTES = bytes([*range(0x09), 0x0B, *range(0x0E, 0x20)])
_OTHER_BYTES = bytes(byte for byte in range(256) if byte not in _CONTROL_BYTES)
_BLOCK_BYTES = 64 * 1024


class _TextBytes(io.RawIOBase):
    """The upload's bytes, refused at the first block holding a control character's byte."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        block = self.stream.read(len(buffer))
        if block.translate(None, _OTHER_BYTES):
            raise _not_text()
        buffer[: len(block)] = block
        return len(block)


class _Lines:
    """The file's lines, each checked for binary content unless its bytes were (`checked`); keeps the
    last one read."""

    def __init__(self, text: Iterable[str], *, checked: bool) -> None:
        self.text, self.checked, self.last = text, checked, ""

    def __iter__(self) -> Iterator[str]:
        for line in self.text:
            # Printable text holds no control character: the search is only for the rest (tabs, Unicode).
            if not self.checked and not line.rstrip("\r\n").isprintable() and _CONTROL.search(line):
                raise _not_text()
            self.last = line
            yield line


class _Line:
    """A csv.writer target that keeps the one row just written, without its line ending.

    The writer ends rows with CRLF and this drops it: with no line terminator the writer would not
    quote a cell holding a line break (a CRM export's notes), and the row could not be read back.
    """

    value = ""

    def write(self, text: str) -> int:
        self.value = text.removesuffix("\r\n")
        return len(text)


# A row, its original text as one comma-separated CSV line (None: to be written from the cells), and
# its number in the file as a spreadsheet numbers it (blank rows and the header counted, from 1).
_Row = tuple[list[str], str | None, int]


class _Reader:
    """One pass over the rows: the email column from the first rows, then every row's address."""

    def __init__(self, email_column: str | None, max_rows: int) -> None:
        self.wanted, self.max_rows = email_column, max_rows
        self.rows: Any = None  # the csv reader, once reading: where a refusal names the row
        self.line = _Line()
        self.writer = csv.writer(self.line, lineterminator="\r\n")

    @property
    def row_number(self) -> int:
        """The file's row the reader is at (counting each line of a quoted cell that spans several)."""
        return self.rows.line_num if self.rows is not None else 1

    def read(self, lines: _Lines) -> AddressList:
        checked = iter(lines)
        sample = list(itertools.islice(checked, _SNIFF_LINES))
        delimiter = sniff_delimiter(sample)
        reader = self.rows = csv.reader(itertools.chain(sample, checked), delimiter=delimiter)
        rows = _filled_rows(reader, lines, len(sample), delimiter)
        head = list(itertools.islice(rows, _DETECT_ROWS))
        if not head:
            return AddressList([], [], [], False, 0, 0)
        column = choose_column([row for row, _, _ in head], self.wanted)
        has_header = "@" not in _at(head[0][0], column)
        header = head[0][0] if has_header else []
        found = self._collect(itertools.chain(head[1:] if has_header else head, rows), column)
        width = max(found.width, len(header))
        found.columns = [*header, *(f"column_{n}" for n in range(len(header) + 1, width + 1))]
        found.has_header = has_header
        return found

    def _collect(self, rows: Iterable[_Row], column: int) -> _Found:
        # The loop runs once a row (100,000 of them): its lookups are hoisted and _at written out.
        unique: dict[str, int] = {}  # each address's index
        originals: list[str] = []
        first_rows = array("l")  # each address's first row number
        later = LaterRows()
        count = width = 0
        max_rows, keep, first_row_of = self.max_rows, originals.append, first_rows.append
        for row, raw, number in rows:
            cell = row[column] if len(row) > column else ""
            if not cell.strip():
                continue
            count += 1
            if count > max_rows:
                raise CsvFileError("too_many_rows", f"The file has more than {max_rows:,} address rows.")
            if len(row) > width:
                width = len(row)
            address = normalise(cell)
            if address not in unique:
                unique[address] = len(unique)
                keep(raw if raw is not None else self._written(row))
                first_row_of(number)
            else:  # a repeat: rare, and kept aside on disk beyond a megabyte
                index = unique[address]
                later.add(count - 1, index, first_rows[index], raw if raw is not None else self._written(row))
        return _Found(list(unique), originals, [], False, column, count, later, width)

    def _written(self, row: list[str]) -> str:
        self.writer.writerow(row)
        return self.line.value


def _filled_rows(reader: _csv.Reader, lines: _Lines, sampled: int, delimiter: str) -> Iterator[_Row]:
    """Rows with any content, each with its line as read when that line alone made the row (and commas
    separate its cells): copying it is much cheaper than writing the cells again. `reader` reads the
    `sampled` lines already read first (their rows are written again: `lines.last` is past them)."""
    commas = delimiter == ","
    seen = 0
    for number, row in enumerate(reader, 1):
        if len(row) > MAX_COLUMNS:
            raise CsvFileError("invalid_file", f"The file has more than {MAX_COLUMNS:,} columns.")
        read = reader.line_num
        alone, seen = read - seen == 1 and read > sampled, read
        if (row and row[0].strip()) or "".join(row).strip():  # the first cell settles most rows
            yield row, lines.last.rstrip("\r\n") if alone and commas else None, number


@dataclass
class _Found(AddressList):
    width: int = 0


def _at(row: list[str], index: int) -> str:
    return row[index] if len(row) > index else ""


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


def choose_column(head: list[list[str]], wanted: str | None) -> int:
    """The named column, else the one headed like an email column, else the one most often holding '@'."""
    if wanted is not None:
        return _named_column(head, wanted.strip())
    names = [name.strip().lower() for name in head[0]]
    for name in EMAIL_HEADERS:
        if name in names:
            return names.index(name)
    width = max(len(row) for row in head)
    counts = [sum("@" in _at(row, index) for row in head) for index in range(width)]
    return counts.index(max(counts))


def _named_column(head: list[list[str]], wanted: str) -> int:
    width = max(len(row) for row in head)
    if wanted.isascii() and wanted.isdigit() and len(wanted) < 10 and 1 <= int(wanted) <= width:
        return int(wanted) - 1
    names = [name.strip().lower() for name in head[0]]
    if wanted and wanted.lower() in names:
        return names.index(wanted.lower())
    message = f"email_column: the file has no column {wanted!r} (a header name or a number from 1 to {width})."
    raise CsvFileError("invalid_request", message, "email_column")
