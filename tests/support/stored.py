"""Where an address could still be: every text and binary cell of the tables asked, read raw."""

from __future__ import annotations

from collections.abc import Iterable

from django.apps import apps
from django.db import connection, models

TEXT = (models.CharField, models.TextField, models.JSONField, models.BinaryField, models.EmailField)


def cells_holding(needles: Iterable[str], tables: Iterable[type[models.Model]] | None = None) -> list[str]:
    """`table.column: value` of every cell that holds one of the needles (case-insensitive); every
    model's table unless `tables` names some. Read with SQL: no model method chooses what is seen."""
    lowered = [needle.lower() for needle in needles]
    found = []
    for model in tables or apps.get_models():
        for table, column, value in _cells(model):
            text = value.decode("utf-8", "replace") if isinstance(value, (bytes, memoryview)) else str(value)
            if any(needle in text.lower() for needle in lowered):
                found.append(f"{table}.{column}: {text[:200]}")
    return found


def _cells(model: type[models.Model]) -> Iterable[tuple[str, str, object]]:
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")  # every column, not only the fields'
        columns = [column[0] for column in cursor.description]
        for row in cursor.fetchall():
            for column, value in zip(columns, row, strict=True):
                if isinstance(value, (str, bytes, memoryview)):
                    yield table, column, bytes(value) if isinstance(value, memoryview) else value
