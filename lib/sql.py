"""Hand-written SQL for the statements every API request runs.

The ORM compiles a query afresh on each call: about 0.3 ms for a one-table filter,
ten times what SQLite then needs to run it. The handful of statements on the
per-request path (key lookup, rate counter, verdict and domain caches, the credit
move) are therefore written out here once, in SQL that both SQLite (3.35+) and
PostgreSQL accept, and run through Django's cursor, so transactions, connections
and test isolation stay Django's. Everything else uses the ORM.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from django.db import connection, models, transaction

# Parameters per statement on SQLite, under its bound-parameter limit (999 before SQLite 3.32).
SQLITE_PARAMETERS = 900


def fetch_one(sql: str, params: Sequence[Any] | Mapping[str, Any]) -> tuple[Any, ...] | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def fetch_all(sql: str, params: Sequence[Any] | Mapping[str, Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def fetch_all_in(select: str, params: Sequence[Any], column: str, values: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of `select` (a statement ending in its WHERE clause, with `params`) whose `column` is
    one of `values`: one array parameter on PostgreSQL, batches under the bound-parameter limit on
    SQLite. Written out because the ORM compiles an IN list of thousands (a bulk chunk's addresses or
    domains) slower than the database reads the rows."""
    if is_postgresql():
        return fetch_all(f"{select} AND {column} = ANY(%s)", [*params, list(values)])
    rows: list[tuple[Any, ...]] = []
    for start in range(0, len(values), SQLITE_PARAMETERS):
        batch = values[start : start + SQLITE_PARAMETERS]
        rows += fetch_all(f"{select} AND {column} IN ({placeholders(len(batch))})", [*params, *batch])
    return rows


def execute(sql: str, params: Sequence[Any] | Mapping[str, Any]) -> int:
    """Run a statement; returns the number of rows it changed. `params` by position (`%s`) or by
    name (`%(name)s`, a name used as often as the statement needs it)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def execute_many(sql: str, rows: Sequence[Sequence[Any]]) -> None:
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


# Rows a transaction of `execute_batched`: SQLite has one writer at a time, and a single
# verification waiting for the lock then waits for one batch, not a bulk chunk's thousands.
WRITE_BATCH = 200


def execute_batched(sql: str, rows: Sequence[Sequence[Any]], size: int = WRITE_BATCH) -> None:
    """Run a statement once per row, `size` rows a transaction: outside one, each row would be a
    commit of its own (a third of a 2,000-row deep chunk's cache writes went to them)."""
    for start in range(0, len(rows), size):
        with transaction.atomic():
            execute_many(sql, rows[start : start + size])


def wal_checkpoint() -> None:
    """SQLite: copy the write-ahead log into the database now, waiting for no reader or writer.

    Bulk workers call it between chunks, so the copying falls on them: otherwise whichever
    connection commits when the log is full does it, often a single verification.
    """
    if connection.vendor == "sqlite" and not connection.in_atomic_block:  # not possible inside a transaction
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")


@functools.cache  # one database vendor per process; quoting is on every request's path
def table(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def is_postgresql() -> bool:
    return connection.vendor == "postgresql"


def placeholders(count: int) -> str:
    return ", ".join(["%s"] * count)


def db_datetime(value: datetime) -> Any:
    """An aware datetime as the database stores it (naive UTC text on SQLite)."""
    return connection.ops.adapt_datetimefield_value(value)


def db_json(value: object) -> Any:
    return connection.ops.adapt_json_value(value, None)


def aware(value: datetime | str) -> datetime:
    """A datetime column read by hand: SQLite gives naive UTC (or text), PostgreSQL aware."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def from_json(value: str | bytes | dict[str, Any] | list[Any]) -> Any:
    """A JSON column read by hand: text on both databases (Django loads jsonb as text)."""
    return value if isinstance(value, (dict, list)) else json.loads(value)
