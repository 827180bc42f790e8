"""jobs.csvfile: reading an uploaded address list, no Django involved."""

from __future__ import annotations

import codecs
import io

import pytest

from jobs.csvfile import AddressList, CsvFileError, read_addresses, read_list


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


def test_a_control_character_deep_in_the_file_is_refused_as_binary() -> None:
    clean = b"".join(b"n%d@good.com\n" % n for n in range(10_000))  # well past the first block read
    assert refusal(clean + b"x\x01y@good.com\n") == "invalid_file"
    assert read(clean + b"tab\t@good.com\x0c\n")[-1] == "tab\t@good.com"  # tab and form feed are text


def test_row_limit_counts_rows_before_deduplication() -> None:
    assert read(b"a@good.com\n" * 3, max_rows=3) == ["a@good.com"]
    assert refusal(b"a@good.com\n" * 4, max_rows=3) == "too_many_rows"


def test_header_does_not_count_as_a_row() -> None:
    assert read(b"email\na@good.com\nb@good.com\n", max_rows=2) == ["a@good.com", "b@good.com"]


def listing(data: bytes, email_column: str | None = None) -> AddressList:
    return read_list(io.BytesIO(data), email_column=email_column)


CRM = b"Name,Company,Email Address,Lead Score\nJane,Acme,jane@good.com,90\nJoe,Bolt,joe@good.com,40\n"


@pytest.mark.parametrize("header", ["email", "E-Mail", "Email Address", "email_address", "MAIL"])
def test_every_email_header_name_is_recognised(header: str) -> None:
    data = f"Name,{header}\nJane,jane@good.com\n".encode()
    assert (listing(data).email_column, listing(data).addresses) == (1, ["jane@good.com"])


def test_without_an_email_header_the_column_holding_at_signs_is_used() -> None:
    found = listing(b"Name,Contact,Score\nJane,jane@good.com,1\nJoe,joe@good.com,2\n")
    assert (found.email_column, found.has_header, found.addresses) == (1, True, ["jane@good.com", "joe@good.com"])


def test_first_row_is_data_when_the_chosen_columns_first_cell_holds_an_at_sign() -> None:
    found = listing(b"Jane,jane@good.com\nJoe,joe@good.com\n")
    assert (found.has_header, found.columns, found.rows) == (False, ["column_1", "column_2"], 2)


def test_email_column_by_header_name_is_case_insensitive() -> None:
    assert listing(CRM, email_column="email address").email_column == 2


def test_email_column_by_one_based_number() -> None:
    found = listing(b"a@good.com,b@good.com\nc@good.com,d@good.com\n", email_column="2")
    assert found.addresses == ["b@good.com", "d@good.com"]


@pytest.mark.parametrize("wanted", ["Phone", "0", "5", "", "²", "9" * 5000])
def test_an_unknown_email_column_is_refused_on_its_param(wanted: str) -> None:
    with pytest.raises(CsvFileError) as caught:
        listing(CRM, email_column=wanted)
    assert (caught.value.code, caught.value.param) == ("invalid_request", "email_column")


def test_each_unique_address_keeps_the_first_row_it_appeared_on() -> None:
    found = listing(b'Name,Email,Note\nJane,JANE@good.com,"first, quoted"\nJane 2,jane@good.com,second\n')
    assert (found.addresses, found.originals) == (["jane@good.com"], ['Jane,JANE@good.com,"first, quoted"'])
    assert (found.rows, found.duplicates) == (2, 1)


def test_a_row_whose_quoted_line_break_ends_the_sniffed_lines_keeps_its_whole_row() -> None:
    # The delimiter is sniffed from the first 50 lines; this row's cell runs from line 50 into line 51.
    rows = [f"Name {n},n{n}@good.com,x" for n in range(48)]
    data = "name,email,note\n" + "\n".join(rows) + '\nJane,jane@good.com,"two\nlines"\nJoe,joe@good.com,y\n'
    found = read_list(io.BytesIO(data.encode()))
    assert found.originals[-2:] == ['Jane,jane@good.com,"two\nlines"', "Joe,joe@good.com,y"]


def test_rows_past_the_sniffed_lines_read_as_the_csv_reader_reads_them() -> None:
    first = "".join(f"Name {n},n{n}@good.com,x\n" for n in range(60))
    rest = 'Ann,ann@good.com,\n\n   \nBo,"bo@good.com",ab"c\r\nCy,cy@good.com,"q, ""r"""\rDi,di@good.com,\n'
    found = read_list(io.BytesIO(("name,email,note\n" + first + rest).encode()))
    assert found.addresses[-4:] == ["ann@good.com", "bo@good.com", "cy@good.com", "di@good.com"]
    assert found.originals[-4:] == [
        "Ann,ann@good.com,",
        'Bo,"bo@good.com",ab"c',
        'Cy,cy@good.com,"q, ""r"""',
        "Di,di@good.com,",
    ]
    assert (found.rows, found.columns) == (64, ["name", "email", "note"])


def test_rows_wider_than_the_header_get_numbered_columns() -> None:
    assert listing(b"Name,Email\nJane,jane@good.com,extra\n").columns == ["Name", "Email", "column_3"]


def test_rows_repeating_an_address_are_kept_aside_with_their_place_and_first_row_number() -> None:
    from jobs.csvfile import LaterRow, later_rows_read

    data = b"Name,Email\nAnn,ann@good.com\n\nBob,bob@good.com\nAnnie,ANN@good.com\nRob,bob@good.com \n"
    found = read_list(io.BytesIO(data))
    assert (found.addresses, found.rows, found.duplicates) == (["ann@good.com", "bob@good.com"], 4, 2)
    found.later_rows.file.seek(0)
    assert list(later_rows_read(found.later_rows.file)) == [
        LaterRow(place=2, unique_at=0, first_row=2, cells=["Annie", "ANN@good.com"]),
        LaterRow(place=3, unique_at=1, first_row=4, cells=["Rob", "bob@good.com "]),  # row 3 is the blank one
    ]
