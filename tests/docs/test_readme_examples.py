"""Every `curl` example of the README (and docs/bulk.md) works as written, against a live server.

Each fenced ```sh block that calls curl is run by bash, in an empty directory, against
runserver and a qcluster started here with a demo account (as `make run` does), with
`$API_KEY` set and `http://localhost:8000` pointing at the server's port. curl is wrapped
with `--fail-with-body` (unless the command fails on errors itself, with `-f`), so any answer
outside 2xx fails the block; every curl of the block must have run, and a file it saved must
not hold an error. A command after a comment line starting `# illustration` is shown in the docs,
not run (say why on that line: it needs the internet, a placeholder id, ...).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs.conftest import (
    ALL_EXAMPLES,
    CURL_CALL,
    DOCUMENTED_BASE,
    DOCUMENTS,
    ROOT,
    SHELL_BLOCK,
    Example,
    shell_commands,
)
from tests.support.dns_server import DnsServer
from tests.support.live_stack import LiveService, live_stack

pytestmark = pytest.mark.e2e
# curl wrapped: non-2xx fails, and each call that succeeded is counted.
PRELUDE = """set -euo pipefail
shopt -s inherit_errexit
curl() {
  local fail=--fail-with-body arg
  for arg in "$@"; do [[ $arg == --fail || $arg =~ ^-[a-zA-Z]*f[a-zA-Z]*$ ]] && fail=; done
  command curl $fail --show-error "$@" && echo . >> "$CURL_CALLS"
}
"""


RUNNABLE = [example for example in ALL_EXAMPLES if example.commands]


@pytest.fixture(scope="module")
def live_service(
    tmp_path_factory: pytest.TempPathFactory, dns_server: DnsServer, migrated_sqlite: Path
) -> Iterator[LiveService]:
    tmp = tmp_path_factory.mktemp("readme")
    with live_stack(tmp, dns_address=dns_server.address, migrated_sqlite=migrated_sqlite) as service:
        yield service


SAVED_FILE = re.compile(r"(?:^|\s)(?:-o|--output)\s+(?!/dev/null)(\S+)")
FAILS_ON_HTTP_ERROR = re.compile(r"(?:^|\s)(?:--fail\b|--fail-with-body\b|-[a-zA-Z]*f[a-zA-Z]*\b)")


def curl_commands(document: str) -> list[str]:
    """Every curl command of the document's shell blocks, run or illustration."""
    text = (ROOT / document).read_text()
    blocks = [match.group(1) for match in SHELL_BLOCK.finditer(text)]
    return [command for block in blocks for command, _ in shell_commands(block) if CURL_CALL.search(command)]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_curl_that_saves_a_file_fails_on_an_http_error(document: str) -> None:
    """Without --fail curl saves a 409's JSON as the CSV and exits 0: a reader copying the line is misled."""
    saving = [command for command in curl_commands(document) if SAVED_FILE.search(command)]
    assert saving
    for command in saving:
        assert FAILS_ON_HTTP_ERROR.search(command), command


def test_the_readme_account_commands_work_as_written(migrated_sqlite: Path, tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text()
    block = next(m.group(1) for m in SHELL_BLOCK.finditer(text) if "manage.py create_account" in m.group(1))
    create, grant = (command for command, _ in shell_commands(block))
    database = tmp_path / "db.sqlite3"
    shutil.copyfile(migrated_sqlite, database)
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"} | {
        "DATABASE_URL": f"sqlite:///{database}"
    }
    run = {"cwd": ROOT, "env": env, "capture_output": True, "text": True, "timeout": 120, "shell": True}
    created = subprocess.run(create, **run)  # type: ignore[call-overload]
    assert created.returncode == 0, created.stderr
    account_id = json.loads(created.stdout)["account_id"]
    granted = subprocess.run(grant.replace("ACCOUNT_ID", account_id), **run)  # type: ignore[call-overload]
    assert granted.returncode == 0, granted.stderr
    assert "1500" in granted.stdout


def test_the_readme_examples_are_found_and_mostly_run() -> None:
    readme = [example for example in ALL_EXAMPLES if example.document == "README.md"]
    assert sum(example.curl_calls for example in readme) >= 3
    assert sum(example.illustrations for example in readme) == 1


@pytest.mark.parametrize("example", RUNNABLE, ids=[f"{e.document}:{e.line}" for e in RUNNABLE])
def test_documented_curl_example_works_as_written(example: Example, live_service: LiveService, tmp_path: Path) -> None:
    script = PRELUDE + "\n".join(example.commands).replace(DOCUMENTED_BASE, live_service.base_url)
    calls = tmp_path / "curl-calls"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "API_KEY": live_service.api_key}
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env={**env, "CURL_CALLS": str(calls)}, capture_output=True, timeout=60
    )
    assert done.returncode == 0, f"{example.document}:{example.line} failed:\n{done.stderr.decode()}"
    assert calls.read_text().count(".") == example.curl_calls
    for command in example.commands:  # a saved file holds what was asked for, never an error's JSON
        for name in SAVED_FILE.findall(command):
            assert not (tmp_path / name).read_bytes().startswith(b'{"error"'), command
