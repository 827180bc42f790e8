"""Every command in a shell block of README.md and docs/*.md is run by a test as written, or is
listed here with the reason it cannot be; a new command in the docs fails the inventory until it
is one or the other.

The curl blocks (and every command beside a curl) run in tests/docs/test_readme_examples.py; a command
after a `# illustration` comment line is shown, not run, and that line says why. This module runs
the production lines (migrate, collectstatic, gunicorn, qcluster) and keeps the inventory.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
from pathlib import Path

import pytest
import requests

from bench.procs import command_line, free_port, group_members, stop_group, wait_for_port
from tests.docs.conftest import ALL_EXAMPLES, SHELL_BLOCK, shell_commands
from tests.support.dns_server import DnsServer
from tests.support.project import ROOT, project_copy
from tests.support.waiting import wait_until

DOCUMENTS = ["README.md", *sorted(f"docs/{path.name}" for path in (ROOT / "docs").glob("*.md"))]

_ACCOUNT = "tests/docs/test_readme_examples.py::test_the_readme_account_commands_work_as_written"
_PRODUCTION = "tests/docs/test_doc_commands.py::test_the_production_commands_serve_and_stop"
# Each command as the docs write it (its trailing comment cut, blanks collapsed) -> the test that runs it.
RUN_ELSEWHERE = {
    "make run": "tests/config/test_port.py::test_make_run_on_another_port_prints_and_serves_links_on_it "
    "(as `make run PORT=…`, the variant the same line documents, then SIGINT)",
    ".venv/bin/python manage.py create_account --email owner@example.com --plan starter --credits 1000 --json": (
        _ACCOUNT
    ),
    ".venv/bin/python manage.py grant_credits ACCOUNT_ID 500": _ACCOUNT,
    ".venv/bin/python manage.py migrate": _PRODUCTION,
    ".venv/bin/python manage.py collectstatic --noinput": _PRODUCTION,
    ".venv/bin/gunicorn -c config/gunicorn.conf.py -w 4": _PRODUCTION,
    ".venv/bin/python manage.py qcluster": _PRODUCTION,
}
_PRODUCTION_EXPORT = (
    "export DATABASE_URL=postgres://verifier@db:5432/verifier REDIS_URL=redis://cache:6379/0 \\ SECRET_KEY=… "
    "ALLOWED_HOSTS=verify.example.com SITE_URL=https://verify.example.com \\ SECURE_COOKIES=1 "
    "SECURE_SSL_REDIRECT=1 SECURE_HSTS_SECONDS=31536000 BEHIND_TLS_PROXY=1"
)
RUN_ELSEWHERE[".venv/bin/python -m bench.mxfarm --verdict-table --serve"] = (
    "tests/docs/test_doc_commands.py::test_the_deep_mode_farm_serves_until_ctrl_c"
)
RUN_ELSEWHERE[
    'VERIFIER_SMTP_EGRESS="bind:203.0.113.7|helo=mx1.verifier.example,bind:203.0.113.8|helo=mx2.verifier.example,'
    'socks5://10.0.0.5:1080|helo=mx3.verifier.example"'
] = "tests/verification/test_egress.py::test_the_documented_egress_list_is_read_as_three_egresses (the value, parsed)"
RUN_ELSEWHERE["make run-offline"] = (
    "tests/docs/test_quickstart.py::test_a_fresh_copy_follows_the_quickstart_offline_to_a_verified_address_and_a_job "
    "(as `make run-offline PORT=…`, then the Quickstart's curl block against it)"
)
RUN_ELSEWHERE[_PRODUCTION_EXPORT] = _PRODUCTION + " (its settings, with this machine's database, cache and port)"
# Each command no test runs -> why.
NOT_RUN = {
    "make test": "the default suite itself: run from a test it would recurse",
    "make install-dev": "installs into the virtualenv the suite runs from; `make test` and `make test-all` run it "
    "before the suite (their recipes depend on it)",
    ".venv/bin/python -m tests.support.localstripe --port 8420 &": "fixed ports (8420, and make run's 8000) a "
    "parallel suite cannot hold; the billing tests start the same module on a free port (tests/support/localstripe.py)",
    "STRIPE_SECRET_KEY=sk_test_local STRIPE_PUBLISHABLE_KEY=pk_test_local STRIPE_WEBHOOK_SECRET=whsec_local \\ "
    "STRIPE_API_BASE=http://127.0.0.1:8420 STRIPE_JS_URL=http://127.0.0.1:8420/js.stripe.com/v3/ make run": "the "
    "same fixed ports; make run itself is run by tests/config/test_port.py, these settings by the billing tests",
    "python3 -m venv venv && venv/bin/pip install ./clients/python": "builds the client into a new virtualenv, "
    "fetching setuptools from the package index; the client's suite (clients/python/tests) runs the same "
    "`verifier` command against a live service",
    "export PATH=$PWD/venv/bin:$PATH": "part of the client's setup above",
    "export VERIFIER_API_KEY=ev_test_… VERIFIER_BASE_URL=http://localhost:8000": "a placeholder key (the one make "
    "run printed); part of the client's setup above",
    "printf 'valid@sandbox.example\\ninvalid@sandbox.example\\ncatchall@sandbox.example\\njane.doe@gmial.com\\n"
    "not-an-address\\n' > contacts.txt": "input for the client's commands above",
    "printf 'email\\nvalid@sandbox.example\\nfull@sandbox.example\\nrole@sandbox.example\\ngreylisted@sandbox.example"
    "\\n' > contacts.csv": "input for the client's commands above",
    "python manage.py refresh_disposable_domains disposable_email_blocklist.conf emails.txt --output /tmp/no-mc.txt": (
        "needs the upstream lists downloaded (the block's illustration line); "
        "tests/verification/test_disposable.py runs the command on small files"
    ),
    "python -m bench.disposable_coverage dd.txt list.txt --list /tmp/no-mc.txt": "needs the held-out lists "
    "downloaded (the block's illustration line); tests/verification/test_disposable.py runs the coverage on "
    "small lists",
}
TRAILING_COMMENT = re.compile(r"\s+#\s.*$", re.MULTILINE)


def normalised(command: str) -> str:
    return " ".join(TRAILING_COMMENT.sub("", command).split())


def documented_commands() -> list[tuple[str, str, bool]]:
    """(document, command, illustration) for every command of every shell block."""
    found = []
    for document in DOCUMENTS:
        text = (ROOT / document).read_text()
        for match in SHELL_BLOCK.finditer(text):
            for command, illustration in shell_commands(match.group(1)):
                found.append((document, normalised(command), illustration))
    return found


def run_by_the_curl_examples() -> set[str]:
    return {normalised(command) for example in ALL_EXAMPLES for command in example.commands}


def test_every_documented_command_is_run_by_a_test_or_listed_with_why_not() -> None:
    accounted = run_by_the_curl_examples() | set(RUN_ELSEWHERE) | set(NOT_RUN)
    unlisted = [
        (doc, command) for doc, command, shown in documented_commands() if not shown and command not in accounted
    ]
    assert not unlisted, f"run these in a test, or list them in NOT_RUN with the reason: {unlisted}"


def test_the_lists_name_only_commands_the_docs_still_hold() -> None:
    documented = {command for _, command, _ in documented_commands()}
    assert set(RUN_ELSEWHERE) | set(NOT_RUN) <= documented, (set(RUN_ELSEWHERE) | set(NOT_RUN)) - documented


def production_block() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = next(m.group(1) for m in SHELL_BLOCK.finditer(text) if "gunicorn -c config/gunicorn.conf.py" in m.group(1))
    return [command for command, _ in shell_commands(block)]


@pytest.mark.e2e
def test_the_production_commands_serve_and_stop(tmp_path: Path, dns_server: DnsServer) -> None:
    export, migrate, collectstatic, gunicorn, qcluster = production_block()
    copy, port = project_copy(tmp_path), free_port()
    # The documented settings, then this machine's database, cache, port and resolver (for db:5432, cache:6379).
    local = (
        f"export DATABASE_URL=sqlite:///{tmp_path / 'db.sqlite3'} REDIS_URL= PORT={port} "
        f"MEDIA_ROOT={tmp_path / 'media'} VERIFIER_DNS_NAMESERVERS={dns_server.address} LOG_LEVEL=WARNING"
    )
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "SITE_URL", "DJANGO_SETTINGS_MODULE"}}

    def script(command: str) -> list[str]:
        return ["bash", "-c", f"set -e\n{export}\n{local}\n{command}"]

    for command in (migrate, collectstatic):
        done = subprocess.run(script(command), cwd=copy, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    assert (copy / "staticfiles" / "admin").is_dir()
    created = subprocess.run(
        script(".venv/bin/python manage.py create_account --email prod@example.com --plan starter --credits 5 --json"),
        cwd=copy, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    api_key = created.stdout.split('"api_key": "', 1)[1].split('"', 1)[0]
    servers = [
        subprocess.Popen(script(f"exec {command}"), cwd=copy, env=env, start_new_session=True)
        for command in (gunicorn, qcluster)
    ]
    try:
        wait_for_port(port, process=servers[0])
        proxied = {"Host": "verify.example.com", "X-Forwarded-Proto": "https"}  # as the TLS proxy sends
        assert_ready(port, proxied)  # the qcluster's heartbeat included
        answer = requests.post(
            f"http://127.0.0.1:{port}/v1/verify",
            json={"email": "someone@gmail.com"},
            headers={**proxied, "Authorization": f"Bearer {api_key}"},
            timeout=30,
        )
        assert (answer.status_code, answer.json()["status"]) == (200, "valid")
        for server in servers:
            os.killpg(server.pid, signal.SIGINT)  # Ctrl-C, as the README says both stop
        for server in servers:
            stopped_within(server, GUNICORN_GRACE + 10)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
    finally:
        for server in servers:
            stop_group(server)


# Ctrl-C stops gunicorn's workers at once; its master kills any still there after graceful_timeout.
# Idle workers stop within a second or two, yet once on CI (PostgreSQL's run, 2026-11-30) three of
# four had not after 20 s, with none of them logging its exit: the test waits for gunicorn's own
# bound, and says what each process was doing if even that passes.
_GRACE = re.search(r"^graceful_timeout = (\d+)$", (ROOT / "config" / "gunicorn.conf.py").read_text(), re.M)
assert _GRACE, "config/gunicorn.conf.py sets graceful_timeout"
GUNICORN_GRACE = int(_GRACE[1])


def stopped_within(server: subprocess.Popen[bytes], seconds: float) -> None:
    try:
        server.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {seconds} s after Ctrl-C:\n{describe_group(server.pid)}")


def describe_group(pgid: int) -> str:
    """Each process of the group: its state, and what each of its threads waits in (the kernel's wchan)."""
    lines = []
    for pid in group_members(pgid):
        with contextlib.suppress(OSError):
            proc = Path(f"/proc/{pid}")
            state = next(line for line in (proc / "status").read_text().splitlines() if line.startswith("State:"))
            waits = sorted((task / "wchan").read_text() for task in (proc / "task").iterdir())
            command = " ".join(command_line(pid))[:120]
            lines.append(f"{pid} {state.split(maxsplit=1)[1]} threads waiting in {waits}: {command}")
    return "\n".join(lines) or "(no process left in the group)"


def assert_ready(port: int, headers: dict[str, str], timeout: float = 90) -> None:
    # A worker's first answer waits for it to boot: seconds on a loaded machine.
    readyz = f"http://127.0.0.1:{port}/readyz"
    wait_until(lambda: requests.get(readyz, headers=headers, timeout=60).status_code == 200, "/readyz", timeout)


@pytest.mark.e2e
def test_the_deep_mode_farm_serves_until_ctrl_c() -> None:
    """docs/deep.md, "Try it on this machine": the farm says where it listens, answers SMTP, stops on Ctrl-C."""
    text = (ROOT / "docs" / "deep.md").read_text()
    command = next(c for m in SHELL_BLOCK.finditer(text) for c, _ in shell_commands(m.group(1)) if "bench.mxfarm" in c)
    farm = subprocess.Popen(
        ["bash", "-c", f"exec {command}"], cwd=ROOT, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert farm.stdout is not None
        printed = json.loads(farm.stdout.readline())
        with socket.create_connection(("127.0.0.2", printed["smtp_port"]), timeout=10) as smtp:
            assert smtp.recv(512).startswith(b"220")  # the verdict table's first mail server greets
        os.killpg(farm.pid, signal.SIGINT)
        assert farm.wait(timeout=15) is not None
    finally:
        stop_group(farm)
