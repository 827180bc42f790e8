"""DEBUG's log of SQL statements, kept only where someone reads it.

With DEBUG on (as `make run` starts the service), Django wraps every cursor in its debug cursor,
which keeps each statement in `connection.queries` and hands it to the `django.db.backends`
logger. On SQLite that costs a second query per statement: to show the statement with its values,
the debug cursor asks SQLite to quote them (`SELECT QUOTE(?), …`, up to 999 at a time). In a
qcluster worker nobody reads `connection.queries`, and the logger is at WARNING unless a developer
turns it up; yet a 100,000-row fast job's worker spent about 4% of its chunks' time on that
quoting (py-spy, bench/README.md, "From outside: a bulk job").

So a worker's connections use the debug cursor only when the statements are read: a test
capturing them (`CaptureQueriesContext`, `assertNumQueries`: Django's `force_debug_cursor`) or
the `django.db.backends` logger at DEBUG. Otherwise a plain cursor runs the same statement.
Nothing changes with DEBUG off: Django then never asks for a debug cursor.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created

SQL_LOGGER = logging.getLogger("django.db.backends")


def statements_logged_only_when_read() -> None:
    """From now on, in this process: every connection, open or still to open, logs its statements
    only when they are read. For a process that serves no page (a worker), not the web's."""
    connection_created.connect(_logged_only_when_read, dispatch_uid="statements-logged-only-when-read")
    for wrapper in connections.all(initialized_only=True):
        _logged_only_when_read(connection=wrapper)


def _logged_only_when_read(*, connection: BaseDatabaseWrapper, **_: object) -> None:
    setattr(connection, "make_debug_cursor", functools.partial(_cursor, connection))  # noqa: B010


def _cursor(connection: BaseDatabaseWrapper, cursor: Any) -> Any:
    if connection.force_debug_cursor or SQL_LOGGER.isEnabledFor(logging.DEBUG):
        return type(connection).make_debug_cursor(connection, cursor)
    return connection.make_cursor(cursor)
