"""The one way a test gets committed data (threads, a live server, the raw WSGI app)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from django.db import connection

from bench.procs import free_port

# Every such test uses serialized_rollback. A plain flush re-creates content types under new
# ids, and a serialized_rollback test running after it fails re-inserting the original rows,
# so mixing the two makes the suite depend on the order its files run in.
committed_db = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@contextlib.contextmanager
def database_unreachable() -> Iterator[None]:
    """The default connection pointed at a closed loopback port (PostgreSQL) or an unopenable file
    (SQLite), then put back. For a committed_db test: a transaction cannot survive it."""
    saved = dict(connection.settings_dict)
    connection.close()
    if connection.vendor == "sqlite":
        connection.settings_dict["NAME"] = "/nonexistent-dir/unreachable.sqlite3"
    else:
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(free_port()))
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.update(saved)
