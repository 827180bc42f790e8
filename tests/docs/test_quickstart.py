"""The README's Quickstart, offline, as a newcomer follows it on a fresh copy of the project: `make
run-offline` (the loopback DNS server instead of the internet's), then the block of curl commands it
gives, with the key `make run` printed, to a verified address and a finished job whose result has
every row. Nothing leaves the machine: the only resolver asked is the one `make run-offline` starts."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from bench.procs import free_port, stop_group, wait_for_port
from tests.docs.conftest import DOCUMENTED_BASE, SHELL_BLOCK, shell_commands
from tests.support.project import project_copy, read_until

ROOT = Path(__file__).resolve().parents[2]


def quickstart_blocks() -> list[list[str]]:
    """The commands of each shell block of the README's Quickstart section, in order."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    return [[command for command, _ in shell_commands(m.group(1))] for m in SHELL_BLOCK.finditer(section)]


def test_the_quickstart_starts_offline_with_one_make_target_before_any_other_command() -> None:
    offline = next(block for block in quickstart_blocks() if any("run-offline" in c for c in block))
    assert [command.split("#")[0].strip() for command in offline] == ["make run-offline"]
    recipe = subprocess.run(
        ["make", "-n", "run-offline", "PORT=18280"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "bench.dnsd --port 18333" in recipe and "VERIFIER_DNS_NAMESERVERS=127.0.0.1:18333" in recipe


@pytest.mark.e2e
def test_a_fresh_copy_follows_the_quickstart_offline_to_a_verified_address_and_a_job(tmp_path: Path) -> None:
    copy = project_copy(tmp_path)
    port, dns_port = free_port(), free_port()
    outside = {"DATABASE_URL", "SITE_URL", "DJANGO_SETTINGS_MODULE", "VERIFIER_DNS_NAMESERVERS", "REDIS_URL"}
    env = {k: v for k, v in os.environ.items() if k not in outside}
    make = subprocess.Popen(
        ["make", "run-offline", f"PORT={port}", f"DNS_PORT={dns_port}"],
        cwd=copy,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        printed = read_until(make, "API docs:", timeout=180)
        wait_for_port(port, process=make)
        api_key = printed.split("API key:", 1)[1].split()[0]
        [curls] = [block for block in quickstart_blocks() if any("curl" in command for command in block)]
        script = "set -euo pipefail\n" + "\n".join(curls).replace(DOCUMENTED_BASE, f"http://localhost:{port}")
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=copy,
            env={"PATH": os.environ["PATH"], "API_KEY": api_key},
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert done.returncode == 0, done.stderr
        assert re.search(r'"email":"jane\.doe@gmail\.com","is_valid":true,"status":"valid"', done.stdout)
        rows = (copy / "quickstart-result.csv").read_text().splitlines()
        assert rows[0].startswith("email,verifier_email,verifier_status") and rows[0].endswith(",duplicate_of_row")
        assert [row.split(",")[0] for row in rows[1:]] == [
            "jane.doe@gmail.com",
            "info@acme-corp.com",
            "Jane.Doe@gmail.com",
        ]
        assert rows[3].endswith(",2")
        os.killpg(make.pid, signal.SIGINT)  # Ctrl-C
        rest = make.communicate(timeout=15)[0]
        assert " INFO django-q " not in printed + rest  # the workers are quiet on make run's terminal
    finally:
        stop_group(make)
