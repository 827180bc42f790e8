"""The suite's SQLite databases start from a migrated copy kept in `var/test-databases/`, keyed by
the migrations and Django's version, instead of applying every migration again.

Applying the project's 90-odd migrations takes about 5 s, and the suite did it in every xdist
worker for its test database, and again (in a `manage.py migrate` subprocess) for the
SQLite file each live stack copies. Now the first run after a migration changes pays that once;
later runs copy the file (SQLite's online backup, a few milliseconds). `migrate` still runs over
the copy, and finds nothing to apply, so a stale copy can never hide a migration: a new or edited
migration file changes the key. PostgreSQL runs are untouched (their template database is made
once per run, tests/support/stack_db.py). `rm -r var/test-databases` forgets every copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import django

ROOT = Path(__file__).resolve().parents[2]
KEPT = ROOT / "var" / "test-databases"


def migrations_key() -> str:
    """Changes whenever any migration file or Django's version does."""
    digest = hashlib.sha256(django.__version__.encode())
    for path in sorted(ROOT.glob("*/migrations/*.py")):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def kept_copy(kind: str) -> Path:
    return KEPT / f"{kind}-{migrations_key()}.sqlite3"


def keep(path: Path, write: Callable[[sqlite3.Connection], None]) -> None:
    """Write a copy atomically: two xdist workers making it at once each rename a whole file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".partial")
    os.close(fd)
    try:
        with contextlib.closing(sqlite3.connect(temporary)) as target:
            write(target)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _is_test_database(connection: Any) -> bool:
    """SQLite's test database: a file (`var/test.sqlite3`, one per xdist worker) or in memory."""
    if connection.vendor != "sqlite":
        return False
    name = connection.settings_dict["NAME"]
    return connection.is_in_memory_db() or name == connection.settings_dict.get("TEST", {}).get("NAME")


class SuiteTestDatabase:
    """Restores the kept copy into the test database as Django first connects to it (the
    `connection_created` signal, as `migrate` begins, on the file create_test_db has just
    deleted), and keeps a copy after a run that had none."""

    def __init__(self) -> None:
        self.path = kept_copy("suite")
        self.seen = False  # only the database's very first connection is ever restored into
        self.restored = False

    def on_connection(self, sender: Any, connection: Any, **kwargs: Any) -> None:
        if self.seen or not _is_test_database(connection):
            return
        self.seen = True
        if self.path.exists():
            with contextlib.closing(sqlite3.connect(self.path)) as source:
                source.backup(connection.connection)
            self.restored = True

    def keep_if_new(self, connection: Any) -> None:
        if not self.seen or self.restored or not _is_test_database(connection):
            return
        connection.ensure_connection()
        keep(self.path, connection.connection.backup)
