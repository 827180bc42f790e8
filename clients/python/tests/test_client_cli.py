"""The `verifier` command line, run as a user runs it, against a live service."""

from __future__ import annotations

import csv
import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.live_stack import LiveService

VERIFIER = str(Path(sys.executable).parent / "verifier")


def run(service: LiveService, *args: str, key: str = "test_api_key") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VERIFIER_API_KEY": service.account[key], "VERIFIER_BASE_URL": service.base_url}
    return subprocess.run([VERIFIER, *args], env=env, capture_output=True, text=True, timeout=120)


def test_verify_prints_the_result(service: LiveService) -> None:
    done = run(service, "verify", "invalid@sandbox.example")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["status"], result["sub_status"]) == ("invalid", "mailbox_not_found")


def test_verify_with_a_live_key_spends_a_credit(service: LiveService) -> None:
    before = json.loads(run(service, "account", key="api_key").stdout)["credits_remaining"]
    assert json.loads(run(service, "verify", "e@good.com", key="api_key").stdout)["status"] == "valid"
    assert json.loads(run(service, "account", key="api_key").stdout)["credits_remaining"] == before - 1


def test_batch_prints_one_json_line_per_address_in_order(service: LiveService, tmp_path: Path) -> None:
    addresses = ["valid@sandbox.example", "role@sandbox.example", "not an address"] * 40
    (tmp_path / "list.txt").write_text("email\n" + "\n".join(addresses) + "\n\n")
    done = run(service, "batch", str(tmp_path / "list.txt"))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["email"] for line in lines] == addresses
    assert [line["status"] for line in lines[:3]] == ["valid", "risky", "invalid"]


def test_bulk_waits_and_writes_the_results(service: LiveService, tmp_path: Path) -> None:
    (tmp_path / "list.csv").write_text("email\nvalid@sandbox.example\ncatchall@sandbox.example\n")
    out = tmp_path / "result.csv"
    done = run(service, "bulk", str(tmp_path / "list.csv"), "--wait", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    assert "completed: 2/2" in done.stderr  # plain lines when stderr is not a terminal
    rows = list(csv.DictReader(out.open()))
    assert [(row["email"], row["status"]) for row in rows] == [
        ("valid@sandbox.example", "valid"),
        ("catchall@sandbox.example", "risky"),
    ]


def test_bulk_shows_a_progress_bar_on_a_terminal(service: LiveService, tmp_path: Path) -> None:
    (tmp_path / "list.csv").write_text("valid@sandbox.example\n")
    controller, terminal = pty.openpty()
    env = {**os.environ, "VERIFIER_API_KEY": service.account["test_api_key"], "VERIFIER_BASE_URL": service.base_url}
    env |= {"TERM": "xterm-256color", "COLUMNS": "100"}
    with subprocess.Popen(
        [VERIFIER, "bulk", str(tmp_path / "list.csv"), "--wait"], env=env, stdout=subprocess.PIPE, stderr=terminal
    ) as process:
        os.close(terminal)
        shown = b""
        while chunk := _read(controller):
            shown += chunk
        assert process.wait(timeout=60) == 0
    os.close(controller)
    assert "━" in shown.decode(errors="replace")  # rich's bar


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:  # the terminal's other end closed
        return b""


def test_account_prints_the_account(service: LiveService) -> None:
    account = json.loads(run(service, "account").stdout)
    assert account["key"]["mode"] == "test" and account["plan"]["code"] == "starter"


def test_an_api_error_is_one_line_on_stderr_and_exit_status_1(service: LiveService) -> None:
    env_key = {"VERIFIER_API_KEY": "ev_live_" + "x" * 32}
    done = subprocess.run(
        [VERIFIER, "--base-url", service.base_url, "account"],
        env={**os.environ, **env_key},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("error: 401 invalid_api_key")


def test_a_missing_file_is_a_usage_error(service: LiveService) -> None:
    done = run(service, "batch", "/nonexistent/list.txt")
    assert done.returncode == 2 and "error:" in done.stderr


def test_keys_are_made_listed_capped_and_revoked_from_the_command_line(service: LiveService) -> None:
    made = run(
        service, "keys", "create", "--publishable", "--name", "Shop", "--origin", "https://shop.example.com",
        key="api_key",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    key = json.loads(made.stdout)
    assert key["key"].startswith("ev_pub_live_") and key["daily_cap"] == 1000
    changed = run(
        service, "keys", "update", str(key["id"]), "--daily-cap", "none", "--monthly-cap", "50", key="api_key"
    )
    assert (json.loads(changed.stdout)["daily_cap"], json.loads(changed.stdout)["monthly_cap"]) == (None, 50)
    listed = json.loads(run(service, "keys", "list", key="api_key").stdout)
    assert key["id"] in [each["id"] for each in listed] and all("key" not in each for each in listed)
    assert run(service, "keys", "revoke", str(key["id"]), key="api_key").returncode == 0
    assert key["id"] not in [each["id"] for each in json.loads(run(service, "keys", "list", key="api_key").stdout)]


def test_key_and_base_url_flags_work_after_the_command(service: LiveService) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIFIER_")}
    args = ["verify", "valid@sandbox.example", "--api-key", service.account["test_api_key"], "--base-url"]
    done = subprocess.run([VERIFIER, *args, service.base_url], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "valid"


def test_a_service_that_is_down_is_one_line_and_a_non_zero_exit() -> None:
    import socket

    with socket.socket() as held:  # a port nothing listens on: bound, never accepting
        held.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{held.getsockname()[1]}"
        env = {**os.environ, "VERIFIER_API_KEY": "ev_test_x", "VERIFIER_BASE_URL": url}
        # One retry, not the default four: the same path (asked again after a backoff, then given up),
        # without waiting out ~5 s of backoff.
        argv = [VERIFIER, "verify", "a@b.com", "--retries", "1"]
        started = time.monotonic()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        took = time.monotonic() - started
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"error: cannot reach {url}")
    assert took < 4  # the default four retries back off for about 5 s


@pytest.mark.parametrize("retries", ["-1", "11", "x"])
def test_a_bad_retries_count_is_a_usage_error(retries: str) -> None:
    env = {**os.environ, "VERIFIER_API_KEY": "ev_test_x", "VERIFIER_BASE_URL": "http://127.0.0.1:9"}
    flag = subprocess.run([VERIFIER, "account", f"--retries={retries}"], env=env, capture_output=True, text=True)
    assert flag.returncode == 2 and "retries" in flag.stderr
    env["VERIFIER_RETRIES"] = retries
    variable = subprocess.run([VERIFIER, "account"], env=env, capture_output=True, text=True)
    assert variable.returncode == 2 and variable.stderr.startswith("error: retries must be a whole number")
