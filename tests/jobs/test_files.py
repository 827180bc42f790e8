"""A job's files as jobs/files.py writes them: the input chunks, the result parts."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from jobs.files import input_rows, input_save
from jobs.result_rows import RESULT_COLUMNS, result_row, result_text
from verification.engine.sandbox import SANDBOX_ADDRESSES, sandbox_verdicts
from verification.engine.verdict import Deliverability, Feedback

ADDRESSES = [
    *SANDBOX_ADDRESSES,
    "jane@good.com",
    "jane@good.com",  # a second row of the same outcome
    '"doe,jane"@good.com',  # a comma and quotes: the cell is quoted
    '"say ""hi"""@good.com',
    "=1+2@good.com",  # a formula: neutralised
    "@cmd",
    "not-an-address",
    "",
]


def written_by_the_csv_writer(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue()


def test_result_rows_are_the_csv_writers_rows_of_every_cell() -> None:
    verdicts = sandbox_verdicts(ADDRESSES)
    verdicts[0] = replace(verdicts[0], did_you_mean="jane@gmail.com")
    verdicts[1] = replace(verdicts[1], deliverability=Deliverability(0.25, 12))
    verdicts[2] = replace(verdicts[2], feedback=Feedback("hard_bounce", datetime(2026, 11, 1, tzinfo=UTC)))
    verdicts[3] = replace(verdicts[3], email="line\r\nbreak@good.com")  # not from an upload: the writer's quoting
    text = result_text(verdicts)
    assert text == written_by_the_csv_writer([result_row(verdict) for verdict in verdicts])
    read_back = list(csv.reader(io.StringIO(text)))
    assert all(len(row) == len(RESULT_COLUMNS) for row in read_back)
    assert read_back[3][0] == "line\r\nbreak@good.com"
    assert [row[0] for row in read_back[-8:]] == [
        "jane@good.com",
        "jane@good.com",
        '"doe,jane"@good.com',
        '"say ""hi"""@good.com',
        "'=1+2@good.com",
        "'@cmd",
        "not-an-address",
        "",
    ]
    assert read_back[0][RESULT_COLUMNS.index("did_you_mean")] == "jane@gmail.com"
    assert read_back[1][RESULT_COLUMNS.index("deliverability") :][:2] == ["0.25", "12"]
    assert read_back[2][RESULT_COLUMNS.index("feedback")] == "hard_bounce"


@pytest.mark.parametrize(
    "addresses",
    [
        ["a@good.com", "b@good.com", "c@good.com"],
        ["a@good.com", '"doe,jane"@good.com', '"say ""hi"""@good.com', "line\r\nbreak@good.com"],
    ],
)
def test_input_chunks_read_back_the_addresses_they_were_given(media: Path, addresses: list[str]) -> None:
    folder = input_save("job1", addresses, addresses, chunk_size=2)
    read_back = [*input_rows(folder, 0, 2), *input_rows(folder, 1, 2)]
    assert read_back == addresses
    assert input_rows(folder, 1, 1) == addresses[2:3]  # a partial job's chunk reads its first rows
    assert (media / folder / "000000.csv").read_bytes() == written_by_the_csv_writer(
        [[a] for a in addresses[:2]]
    ).encode()
