"""A fresh service stack for one benchmark: database, web (gunicorn) and qcluster processes.

SQLite (a temp file, the django-q2 ORM broker) or PostgreSQL + Redis (a fresh
``verifier_bench`` database, Redis db 13 flushed; BENCH_PG_DB and BENCH_REDIS_URL name others,
so that two people benchmarking on one machine do not drop each other's). Everything it starts
is stopped, and its temp dir removed, when the ``with`` block ends.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.procs import PY, GroupMemory, Processes, free_port, group_memory, wait_for_port

PG_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"
PG_BENCH_DB = os.environ.get("BENCH_PG_DB", "verifier_bench")
REDIS_BENCH_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")


@dataclass(frozen=True)
class Account:
    account_id: str
    api_key: str
    signing_secret: str


@dataclass
class Stack:
    backend: str  # "sqlite" or "postgres"
    dns_address: str
    settings_module: str = "config.settings"
    extra_env: dict[str, str] = field(default_factory=dict)
    tmp: Path = field(init=False)
    port: int = field(init=False)
    processes: Processes = field(init=False)
    web: subprocess.Popen[bytes] | None = field(init=False, default=None)
    workers: list[subprocess.Popen[bytes]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix=f"bench-{self.backend}-"))
        self.port = free_port()
        self.processes = Processes(self._env())

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "REDIS_URL", "DATABASE_URL")}
        env.update(
            DJANGO_SETTINGS_MODULE=self.settings_module,
            MEDIA_ROOT=str(self.tmp / "media"),
            # Deep mode's per-address slots (lock files), removed with the stack's folder.
            VERIFIER_SMTP_LOCK_DIR=str(self.tmp / "smtp-slots"),
            SITE_URL=self.base_url,
            VERIFIER_DNS_NAMESERVERS=self.dns_address,
            CALLBACK_ALLOW_PRIVATE_NETWORKS="1",
            LOG_LEVEL="WARNING",
            DEBUG="0",
        )
        env.setdefault("VERIFIER_ADDRESS_PEPPER", "bench-only-address-pepper")  # required with DEBUG off
        if self.backend == "sqlite":
            env["DATABASE_URL"] = f"sqlite:///{self.tmp / 'bench.sqlite3'}"
        else:
            env["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{PG_BENCH_DB}"
            env["REDIS_URL"] = REDIS_BENCH_URL
        env.update(self.extra_env)
        return env

    def __enter__(self) -> Stack:
        try:
            if self.backend == "postgres":
                _fresh_postgres()
                _flush_redis()
            self.processes.manage("migrate", "--noinput", "-v0")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.processes.stop_all()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def create_account(self, email: str, credits: int, plan: str = "pro") -> Account:
        out = self.processes.manage(
            "create_account", "--email", email, "--plan", plan, "--credits", str(credits), "--json"
        )
        opened: dict[str, Any] = json.loads(out)
        return Account(opened["account_id"], opened["api_key"], opened["signing_secret"])

    def shell(self, code: str) -> str:
        return self.processes.manage("shell", "-c", code)

    def start_web(self, workers: int = 2) -> None:
        self.web = self.processes.start(
            PY, "-m", "gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi",
            "-b", f"127.0.0.1:{self.port}", "-w", str(workers),
            "--timeout", "120", "--log-level", "warning",
        )  # fmt: skip
        wait_for_port(self.port, process=self.web)

    def start_make_run(self) -> None:
        """`make run`'s two processes as it starts them: a shell in a session of its own runs the
        qcluster in the background and runserver (its autoreloader on) in front. Both share the shell's
        session, as in a terminal: the worker's lower priority (BULK_WORKER_NICENESS) then yields to
        the web beside it, while the session as a whole gets its share of a busy machine (Linux's
        autogroups share the CPU between sessions first). A qcluster leading a session of its own
        would lower that whole session's share (lib/niceness.py): `start_qcluster` puts a shell first."""
        python = shlex.quote(PY)
        both = f"{python} manage.py qcluster & {python} manage.py runserver 127.0.0.1:{self.port}; wait"
        self.web = self.processes.start("bash", "-c", both)
        wait_for_port(self.port, process=self.web)

    def start_qcluster(self, **env: str) -> None:
        """A qcluster started by a shell, as `make run` starts it: the shell leads the session, so the
        workers lower their own priority but not the session's CPU share (lib/niceness.py does that
        only for a session the qcluster leads, whose workers then waited behind every other session
        of a busy machine). `env` overrides the stack's environment for it alone (a machine of its own)."""
        own = {**self.processes.env, **env} if env else None
        # `; wait`: the shell does not exec the qcluster, it stays the session's leader.
        led = f"{shlex.quote(PY)} manage.py qcluster; wait"
        self.workers.append(self.processes.start("bash", "-c", led, env=own))

    def web_memory(self) -> GroupMemory:
        """Peak RSS of gunicorn's workers (the arbiter excluded)."""
        assert self.web is not None
        return group_memory(self.web.pid, exclude_leader=True)

    def worker_memory(self) -> GroupMemory:
        """Peak RSS of every process of every qcluster (its sentinel, monitor, pusher and workers)."""
        peaks: list[float] = []
        for worker in self.workers:
            peaks.extend(group_memory(worker.pid, exclude_leader=True).peaks)  # not the shell
        return GroupMemory(tuple(peaks))


def _fresh_postgres() -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {PG_BENCH_DB} WITH (FORCE)")
        connection.execute(f"CREATE DATABASE {PG_BENCH_DB}")


def _flush_redis() -> None:
    import redis

    client = redis.Redis.from_url(REDIS_BENCH_URL)
    try:
        client.flushdb()
    finally:
        client.close()
