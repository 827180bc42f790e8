"""Where an address could still be: every text and binary cell of the tables asked, read raw."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable

from django.db import connection, models


def cells_holding(needles: Iterable[str], tables: Iterable[type[models.Model]] | None = None) -> list[str]:
    """`table.column: value` of every cell that holds one of the needles (case-insensitive); every
    table of the database (models' or not: the cache's, django-q's) unless `tables` names models.
    Read with SQL: no model method chooses what is seen."""
    lowered = [needle.lower() for needle in needles]
    found = []
    names = [model._meta.db_table for model in tables] if tables else connection.introspection.table_names()
    for name in names:
        for table, column, value in _cells(name):
            text = value.decode("utf-8", "replace") if isinstance(value, (bytes, memoryview)) else str(value)
            if any(needle in text.lower() for needle in lowered):
                found.append(f"{table}.{column}: {text[:200]}")
    return found


def _cells(table: str) -> Iterable[tuple[str, str, object]]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")  # every column, not only the fields'
        columns = [column[0] for column in cursor.description]
        for row in cursor.fetchall():
            for column, value in zip(columns, row, strict=True):
                if isinstance(value, (str, bytes, memoryview)):
                    yield table, column, bytes(value) if isinstance(value, memoryview) else value


def files_holding(needles: Iterable[str], contents: Iterable[tuple[str, bytes]]) -> list[str]:
    """The names of the (name, content) files that hold one of the needles (case-insensitive); a ZIP
    (an account's export) is searched inside too, each of its files uncompressed."""
    lowered = [needle.lower().encode() for needle in needles]
    return [
        name
        for name, content in contents
        if any(needle in part.lower() for part in _readable(content) for needle in lowered)
    ]


def _readable(content: bytes) -> list[bytes]:
    """The file as stored and, for a ZIP, each file inside it."""
    if not content.startswith(b"PK\x03\x04"):
        return [content]
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return [content, *(archive.read(name) for name in archive.namelist())]
