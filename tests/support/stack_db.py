"""Databases for live stacks (runserver or gunicorn and a real qcluster as subprocesses), of the
kind the suite itself runs on, so end-to-end tests run on both deployments we ship:

- the suite on SQLite (the embedded default): each stack gets a copy of one migrated SQLite file
  (kept across runs until a migration changes: tests/support/template_db.py),
  and the ORM broker and the database cache, as `make run` has;
- the suite on PostgreSQL (`DATABASE_URL=postgres://…`, as `.ci/run`'s second pass): each stack
  gets a database of its own, created from a template migrated once per test process, and Redis
  for the queue and the cache (scale-out shape). A Redis database number is held with a lock file
  while a stack uses it, so suites running at once on one machine never share one.

Both cost a copy, not a migration, per stack. Everything is dropped when the stack stops.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import redis
from django.conf import settings

from tests.support.template_db import keep, kept_copy

ROOT = Path(__file__).resolve().parents[2]
REDIS_ADDRESS = "redis://127.0.0.1:6379"
# Redis databases a stack may take; 12 and 15 are tests' own (test_api_errors, test_probes), and
# 9 and 13 the benchmarks' defaults (bench/README.md).
REDIS_DATABASES = (1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 14)
LOCKS = Path("/tmp/verifier-test-redis-locks")


@dataclass(frozen=True)
class StackDatabase:
    """What one stack runs on: its environment, and a query helper for the test's own checks."""

    env: dict[str, str]

    @property
    def url(self) -> str:
        return self.env["DATABASE_URL"]

    @property
    def is_postgres(self) -> bool:
        return self.url.startswith("postgres")

    def sql(self, query: str, *params: object) -> Any:
        """The first column of the first row; `?` placeholders on both databases."""
        if self.is_postgres:
            with psycopg.connect(self.url, autocommit=True) as connection:
                row = connection.execute(query.replace("?", "%s"), params).fetchone()  # type: ignore[arg-type]
        else:
            with contextlib.closing(sqlite3.connect(self.url.removeprefix("sqlite:///"))) as connection:
                row = connection.execute(query, params).fetchone()
        return None if row is None else row[0]

    def tasks_waiting(self) -> int:
        """Tasks in the stack's queue not yet done: the ORM broker's rows (a task leaves the table once
        acknowledged), or the Redis list's length (a task leaves it as a worker takes it)."""
        if "REDIS_URL" in self.env:
            # The Redis broker's list is named after the cluster (config/settings.py Q_CLUSTER).
            return int(redis.Redis.from_url(self.env["REDIS_URL"]).llen(settings.Q_CLUSTER["name"]))
        return int(self.sql("SELECT COUNT(*) FROM django_q_ormq"))

    def cache_entries(self, prefix: str) -> int:
        """Live entries of the stack's cache whose key starts with `prefix` (Django's `:1:` version
        prefix added): the database cache's rows not yet expired, or Redis keys."""
        key = f":1:{prefix}"
        if "REDIS_URL" in self.env:
            return len(redis.Redis.from_url(self.env["REDIS_URL"]).keys(f"{key}*"))
        now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")  # as Django writes times into SQLite
        return int(self.sql("SELECT COUNT(*) FROM cache_table WHERE cache_key LIKE ? AND expires > ?", f"{key}%", now))


class StackDatabases:
    """Hands out fresh databases for live stacks (module docstring); one per test process."""

    def __init__(self, workdir: Path, suite_url: str) -> None:
        self.workdir = workdir
        self.postgres = suite_url.startswith(("postgres://", "postgresql://"))
        self.server = suite_url.rsplit("/", 1)[0] if self.postgres else ""
        self.prefix = f"verifier_live_{uuid.uuid4().hex[:8]}"
        self.template = ""
        self.created: list[str] = []

    @contextlib.contextmanager
    def fresh(self, tmp: Path) -> Iterator[StackDatabase]:
        if not self.postgres:
            path = tmp / "stack.sqlite3"
            shutil.copyfile(self.migrated_sqlite(), path)
            yield StackDatabase({"DATABASE_URL": f"sqlite:///{path}"})
            return
        name = f"{self.prefix}_{len(self.created)}"
        self._admin(f'CREATE DATABASE "{name}" TEMPLATE "{self._migrated_template()}"')
        self.created.append(name)
        try:
            with _redis_database() as redis_url:
                yield StackDatabase({"DATABASE_URL": f"{self.server}/{name}", "REDIS_URL": redis_url})
        finally:
            self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def close(self) -> None:
        if self.template:
            self._admin(f'DROP DATABASE IF EXISTS "{self.template}" WITH (FORCE)')

    def migrated_sqlite(self) -> Path:
        """A migrated SQLite file to copy, kept across runs (tests/support/template_db.py)."""
        path = kept_copy("stack")
        if not path.exists():
            made = self.workdir / "migrated.sqlite3"
            _migrate(f"sqlite:///{made}")
            with contextlib.closing(sqlite3.connect(made)) as source:
                keep(path, source.backup)
        return path

    def _migrated_template(self) -> str:
        if not self.template:
            name = f"{self.prefix}_template"
            self._admin(f'CREATE DATABASE "{name}"')
            self.template = name
            _migrate(f"{self.server}/{name}")
        return self.template

    def _admin(self, statement: str) -> None:
        with psycopg.connect(f"{self.server}/postgres", autocommit=True) as connection:
            connection.execute(statement.encode())


def _migrate(url: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "REDIS_URL"}}
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "migrate", "--noinput", "-v0"],
        env=env | {"DATABASE_URL": url},
        check=True,
        timeout=300,
    )


@contextlib.contextmanager
def _redis_database() -> Iterator[str]:
    """A Redis database no other stack on this machine holds, empty, for as long as the stack runs."""
    LOCKS.mkdir(parents=True, exist_ok=True)
    for number in REDIS_DATABASES:
        fd = os.open(LOCKS / f"{number}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        url = f"{REDIS_ADDRESS}/{number}"
        try:
            redis.Redis.from_url(url).flushdb()
            yield url
            redis.Redis.from_url(url).flushdb()
        finally:
            os.close(fd)
        return
    raise RuntimeError(f"every Redis database in {REDIS_DATABASES} is held by another live stack")
