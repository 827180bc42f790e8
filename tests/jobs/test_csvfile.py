"""jobs.csvfile: reading an uploaded address list, no Django involved."""

from __future__ import annotations

import codecs
import io

import pytest

from jobs.csvfile import CsvFileError, read_addresses


def read(data: bytes, **kwargs: int) -> list[str]:
    return read_addresses(io.BytesIO(data), **kwargs)


def refusal(data: bytes, **kwargs: int) -> str:
    with pytest.raises(CsvFileError) as caught:
        read(data, **kwargs)
    return caught.value.code


def test_one_address_per_line_without_header() -> None:
    assert read(b"a@good.com\nb@good.com\n") == ["a@good.com", "b@good.com"]


def test_email_header_is_skipped_and_its_column_used() -> None:
    assert read(b"name,EMAIL\nJane,jane@good.com\nJoe,joe@good.com\n") == ["jane@good.com", "joe@good.com"]


def test_without_email_header_the_first_column_is_used() -> None:
    assert read(b"jane@good.com,Jane\njoe@good.com,Joe\n") == ["jane@good.com", "joe@good.com"]


def test_semicolons_are_sniffed() -> None:
    assert read(b"name;email\nJane;jane@good.com\nJoe, Jr;joe@good.com\n") == ["jane@good.com", "joe@good.com"]


def test_tabs_are_sniffed() -> None:
    assert read(b"name\temail\nJane\tjane@good.com\nJoe\tjoe@good.com\n") == ["jane@good.com", "joe@good.com"]


def test_quoted_fields_may_hold_newlines_and_delimiters() -> None:
    data = b'email,note\njane@good.com,"line one\nline two, still the note"\njoe@good.com,x\n'
    assert read(data) == ["jane@good.com", "joe@good.com"]


def test_blank_rows_are_ignored() -> None:
    assert read(b"email\n\n  \n,\njane@good.com\r\n\r\njoe@good.com") == ["jane@good.com", "joe@good.com"]


def test_addresses_are_normalised_and_deduplicated_keeping_the_first() -> None:
    assert read(b" B@Good.com \na@good.com\nb@good.com\nA@GOOD.COM\n") == ["b@good.com", "a@good.com"]


def test_utf8_with_bom() -> None:
    assert read(codecs.BOM_UTF8 + "email\nJosé@good.com\n".encode()) == ["josé@good.com"]


def test_utf16_with_bom() -> None:
    assert read("email\nJosé@good.com\n".encode("utf-16")) == ["josé@good.com"]


def test_utf16_big_endian_with_bom() -> None:
    assert read(codecs.BOM_UTF16_BE + "email\nzoë@good.com\n".encode("utf-16-be")) == ["zoë@good.com"]


def test_anything_else_is_windows_1252() -> None:
    assert read("email\nJosé@good.com\n€uro@good.com\n".encode("cp1252")) == ["josé@good.com", "€uro@good.com"]


def test_header_only_has_no_address_rows() -> None:
    assert refusal(b"email\n") == "invalid_file"


def test_empty_file_is_refused() -> None:
    assert refusal(b"") == "invalid_file"


def test_blank_lines_only_is_refused() -> None:
    assert refusal(b"\n\n \r\n") == "invalid_file"


def test_binary_is_refused() -> None:
    assert refusal(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00") == "invalid_file"


def test_row_limit_counts_rows_before_deduplication() -> None:
    assert read(b"a@good.com\n" * 3, max_rows=3) == ["a@good.com"]
    assert refusal(b"a@good.com\n" * 4, max_rows=3) == "too_many_rows"


def test_header_does_not_count_as_a_row() -> None:
    assert read(b"email\na@good.com\nb@good.com\n", max_rows=2) == ["a@good.com", "b@good.com"]
