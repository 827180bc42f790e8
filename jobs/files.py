"""A job's files, all through Django's default storage (local disk or S3).

    jobs/<job id>/input/<index>.csv          accepted addresses of one chunk, one per row
    jobs/<job id>/input/<index>.rows         their original rows, CSV lines separated by NUL
    jobs/<job id>/input/later.rows           the rows repeating an earlier row's address (jobs/csvfile.py)
    jobs/<job id>/grouped-<token>/<index>.csv  a grouped deep job's chunk: its addresses (jobs/grouping.py)
    jobs/<job id>/grouped-<token>/<index>.pos  their positions in the input, one a line
    jobs/<job id>/parts/<index>.a<n>.csv     result rows of one chunk (attempt n)
    jobs/<job id>/result-<token>.csv         the result file customers download
    jobs/<job id>/original-<token>.csv       every address row, the customer's columns first (jobs/original_file.py)
    jobs/<job id>/downloads/<variant>.csv    a filtered download, made at its first request

Input (grouped chunks included) and parts are deleted once both result files exist; the rest goes
with the job. A grouped job's parts are in its chunks' order: the result files put the rows back in
input order by their positions.

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
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import IO

from django.core.files import File
from django.core.files.storage import default_storage

from jobs.csvfile import LaterRows
from jobs.result_rows import QUOTED, RESULT_COLUMNS, result_text
from lib.storage import folder_listing
from lib.tokens import random_base62
from verification.engine import Verdict

_SPOOL_BYTES = 1024 * 1024


def input_folder(job_id: str) -> str:
    return f"jobs/{job_id}/input/"


def input_save(
    job_id: str,
    addresses: Sequence[str],
    originals: Sequence[str],
    chunk_size: int,
    later: LaterRows | None = None,
) -> str:
    """Store the addresses as one file per chunk of `chunk_size`, their original rows beside them, and
    the `later` rows repeating an address; returns their folder. A chunk then reads only its own rows,
    also from S3, where a file is fetched whole.
    """
    folder = input_folder(job_id)
    try:
        for index, start in enumerate(range(0, len(addresses), chunk_size)):
            _addresses_save(_input_name(folder, index), addresses[start : start + chunk_size])
            # NUL never occurs in an accepted file (jobs/csvfile.py refuses it): a separator needing no quoting.
            joined = "\0".join(originals[start : start + chunk_size])
            _save(_originals_name(folder, index), io.BytesIO(joined.encode("utf-8", "surrogatepass")))
        if later is not None and later.count:
            _save(later_name(folder), later.file)
    except BaseException:
        input_delete(folder)
        raise
    return folder


def _addresses_save(name: str, addresses: Sequence[str]) -> None:
    _save(name, io.BytesIO(_one_column(addresses).encode()))


def grouped_save(job_id: str, addresses: Sequence[str], chunks: Sequence[Sequence[int]]) -> str:
    """Store a grouped job's chunks in a folder of their own, each its addresses (`chunks`: their
    positions in `addresses`) and those positions beside them; returns the folder."""
    folder = f"jobs/{job_id}/grouped-{random_base62(8)}/"
    try:
        for index, positions in enumerate(chunks):
            _addresses_save(_input_name(folder, index), [addresses[position] for position in positions])
            _save(_positions_name(folder, index), io.BytesIO("\n".join(map(str, positions)).encode()))
    except BaseException:
        input_delete(folder)
        raise
    return folder


def grouped_positions(folder: str, index: int, count: int) -> list[int]:
    """The input positions of the first `count` addresses of a grouped job's chunk `index`."""
    with default_storage.open(_positions_name(folder, index), "rb") as raw:
        return [int(position) for position in raw.read().split()[:count]]


def input_addresses(folder: str, total: int) -> list[str]:
    """Every accepted address of an upload of `total`, in input order."""
    return list(in_order(input_rows, folder, total))


def in_order[T](read: Callable[[str, int, int], list[T]], folder: str, total: int) -> Iterator[T]:
    """What `read` gives of each chunk file of the upload in turn, `total` rows in all."""
    index, left = 0, total
    while left > 0:
        rows = read(folder, index, left)
        if not rows:
            raise OSError(f"{folder}: {total - left} rows of {total} stored")
        yield from rows
        left, index = left - len(rows), index + 1


def _one_column(cells: Sequence[str]) -> str:
    """The cells as a one-column CSV, as `csv.writer` writes it: their lines joined when none needs quoting."""
    if cells and "" not in cells and not QUOTED.search("".join(cells)):
        return "\r\n".join(cells) + "\r\n"
    buffer = io.StringIO()
    csv.writer(buffer).writerows([cell] for cell in cells)
    return buffer.getvalue()


def input_rows(folder: str, index: int, count: int) -> list[str]:
    """The first `count` addresses of chunk `index`."""
    with default_storage.open(_input_name(folder, index), "rb") as raw:
        text = raw.read().decode()
    if '"' not in text:  # nothing quoted (see _one_column): a row is a line
        return text.split("\r\n")[:-1][:count]
    return [row[0] for row in itertools.islice(csv.reader(io.StringIO(text, newline="")), count)]


def input_originals(folder: str, index: int, count: int) -> list[list[str]]:
    """The original rows (their cells) of the first `count` addresses of chunk `index`."""
    with default_storage.open(_originals_name(folder, index), "rb") as raw:
        lines = raw.read().decode("utf-8", "surrogatepass").split("\0")[:count]
    return list(csv.reader(lines))


def input_delete(*folders: str) -> None:
    delete_quietly(*(name for folder in folders for name in _folder_files(folder)))


def _input_name(folder: str, index: int) -> str:
    return f"{folder}{index:06d}.csv"


def _originals_name(folder: str, index: int) -> str:
    return f"{folder}{index:06d}.rows"


def later_name(folder: str) -> str:
    return f"{folder}later.rows"


def _positions_name(folder: str, index: int) -> str:
    return f"{folder}{index:06d}.pos"


def part_save(job_id: str, index: int, attempt: int, verdicts: Sequence[Verdict]) -> str:
    text = result_text(verdicts)
    return _save(f"jobs/{job_id}/parts/{index:06d}.a{attempt}.csv", io.BytesIO(text.encode()))


def result_assemble(job_id: str, parts: Iterable[tuple[int, str]], *, grouped: str = "", total: int = 0) -> str:
    """Header, then every part's rows in input order, copied through a spool file. `parts` are (chunk
    index, part name) in chunk order; a grouped job's chunks (`grouped`, of `total` rows) are not in
    input order: their rows are put back by position."""
    with tempfile.SpooledTemporaryFile(_SPOOL_BYTES) as spool:
        spool.write((",".join(RESULT_COLUMNS) + "\r\n").encode())
        if grouped:
            for _, line in lines_in_input_order(parts, grouped, total):
                spool.write(line)
        else:
            for _, name in parts:
                with default_storage.open(name, "rb") as part:
                    shutil.copyfileobj(part, spool)
        return _save(f"jobs/{job_id}/result-{random_base62(8)}.csv", spool)


def lines_in_input_order(parts: Iterable[tuple[int, str]], grouped: str, total: int) -> Iterator[tuple[int, bytes]]:
    """A grouped job's result rows (CSV records) with their input positions, in input order. The parts
    are copied into a temporary file, each row's place in it noted (16 bytes a row), then read back
    by position: memory does not grow with the rows' size, and one part is open at a time. Records,
    not lines: an address holding a line break (a quoted cell; invalid syntax) spans two."""
    starts, sizes = array("q", [-1]) * total, array("q", [0]) * total
    record = io.StringIO()
    writer = csv.writer(record)  # the same bytes the part holds: it was written by (or as) csv.writer
    with tempfile.TemporaryFile() as spool:
        end = 0
        for index, name in parts:
            rows = csv_rows(name)
            for position, row in zip(grouped_positions(grouped, index, len(rows)), rows, strict=True):
                record.seek(0)
                record.truncate()
                writer.writerow(row)
                line = record.getvalue().encode()
                starts[position], sizes[position] = end, len(line)
                end += spool.write(line)
        for position in range(total):
            if starts[position] >= 0:
                spool.seek(starts[position])
                yield position, spool.read(sizes[position])


def filtered_save(source: str, name: str, *, column: int, keep: Collection[str]) -> str:
    """`source`'s header and the rows whose cell `column` is in `keep`, saved as `name`."""
    with default_storage.open(source, "rb") as raw:
        reader = csv.reader(io.TextIOWrapper(raw, encoding="utf-8", newline=""))
        header = next(reader, [])
        return csv_save(name, itertools.chain([header], (row for row in reader if row[column] in keep)))


def csv_rows(name: str) -> list[list[str]]:
    with default_storage.open(name, "rb") as raw:
        return list(csv.reader(io.TextIOWrapper(raw, encoding="utf-8", newline="")))


def csv_save(name: str, rows: Iterable[list[str]]) -> str:
    with tempfile.SpooledTemporaryFile(_SPOOL_BYTES) as spool:
        text = io.TextIOWrapper(spool, encoding="utf-8", newline="")
        csv.writer(text).writerows(rows)
        text.flush()
        text.detach()
        return _save(name, spool)


def job_files_delete(job_id: str) -> None:
    """Every file of the job, at once (deletion by the customer, retention)."""
    delete_quietly(*_folder_files(f"jobs/{job_id}/"))


def _folder_files(folder: str) -> list[str]:
    return list(walk(folder))


def delete_quietly(*names: str) -> None:
    for name in names:
        if name:
            default_storage.delete(name)


def _save(name: str, content: IO[bytes]) -> str:
    """Save under `name`, replacing what was there (S3 overwrites; the local disk would rename)."""
    content.seek(0)
    default_storage.delete(name)
    return default_storage.save(name, File(content, name=name))


def walk(folder: str) -> Iterator[str]:
    subfolders, names = folder_listing(folder)  # nothing, for a folder that holds nothing
    yield from (folder + name for name in names)
    for sub in subfolders:
        yield from walk(f"{folder}{sub}/")


def job_files(job_id: str) -> list[str]:
    """Every file the job has now (docs/privacy.md, erasure)."""
    return _folder_files(f"jobs/{job_id}/")
