"""A live stack for tests that talk to the service as its customers do: runserver and a qcluster
as subprocesses (as `make run` starts them), on a copy of the migrated SQLite file, resolving on
the loopback DNS server, with one account opened by `create_account --json`."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.procs import Processes, free_port, wait_for_port


@dataclass(frozen=True)
class LiveService:
    base_url: str
    account: dict[str, Any]  # what create_account --json printed
    env: dict[str, str]

    @property
    def api_key(self) -> str:
        return str(self.account["api_key"])


@contextmanager
def live_stack(tmp: Path, *, dns_address: str, migrated_sqlite: Path, **env: str) -> Iterator[LiveService]:
    port = free_port()
    environment = {
        **{k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "SITE_URL"}},
        "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
        "MEDIA_ROOT": str(tmp / "media"),
        "PORT": str(port),
        "DEBUG": "1",
        "VERIFIER_DNS_NAMESERVERS": dns_address,
        "LOG_LEVEL": "WARNING",
        **env,
    }
    with Processes(env=environment) as processes:
        shutil.copyfile(migrated_sqlite, tmp / "db.sqlite3")
        web = processes.start(sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}")
        processes.start(sys.executable, "manage.py", "qcluster")
        # The account is opened while both start (each is a Django start-up of its own).
        demo = ["--email", "demo@example.com", "--plan", "starter", "--credits", "1000", "--json"]
        account = json.loads(processes.manage("create_account", *demo))
        wait_for_port(port, process=web)
        yield LiveService(base_url=f"http://localhost:{port}", account=account, env=environment)
