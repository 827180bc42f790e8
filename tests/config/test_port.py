"""`make run PORT=18280`: every link we print or hand out follows the port, unless SITE_URL is set."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import requests
from django.core.management import call_command

from bench.procs import free_port, stop_group, wait_for_port
from tests.support.dns_server import DnsServer
from tests.support.project import project_copy, read_until
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


def site_url(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in {"PORT", "SITE_URL", "DJANGO_SETTINGS_MODULE"}}
    code = "import django; django.setup(); from django.conf import settings; print(settings.SITE_URL)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_site_url_follows_port() -> None:
    assert site_url(PORT="18280") == "http://localhost:18280"


def test_site_url_defaults_to_port_8000() -> None:
    assert site_url() == "http://localhost:8000"


def test_a_set_site_url_wins_over_port() -> None:
    assert site_url(PORT="18280", SITE_URL="https://verify.example.com/") == "https://verify.example.com"


def test_make_run_hands_port_to_every_process_it_starts() -> None:
    recipe = subprocess.run(
        ["make", "-n", "run", "PORT=18280"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    started = re.findall(r"manage\.py (demo_account|qcluster|runserver\S*)", recipe)
    assert started == ["demo_account", "qcluster", "runserver"]
    assert re.search(r"^PORT=18280 \S+ manage\.py demo_account$", recipe, re.MULTILINE)
    assert "export PORT=18280" in recipe.split("manage.py demo_account", 1)[1].split("manage.py qcluster")[0]
    assert "runserver 127.0.0.1:18280" in recipe  # loopback only: DEBUG is on


def stripe_hint(env: dict[str, str]) -> str:
    """What `make run PORT=18280`'s localstripe hint prints, run as the recipe writes it."""
    recipe = subprocess.run(
        ["make", "-n", "run", "PORT=18280"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    hint = recipe[recipe.index('if [ -z "$STRIPE_SECRET_KEY" ]') :].split("; fi", 1)[0] + "; fi"
    return subprocess.run(["bash", "-c", hint], env=env, capture_output=True, text=True, check=True).stdout


def test_make_runs_localstripe_hint_follows_port_and_says_it_needs_install_dev() -> None:
    printed = stripe_hint({"PATH": os.environ["PATH"]})
    assert "make install-dev" in printed and "--port 18700 &" in printed
    assert "STRIPE_API_BASE=http://127.0.0.1:18700" in printed and "8420" not in printed


def test_make_run_says_nothing_of_localstripe_when_stripe_is_configured() -> None:
    assert stripe_hint({"PATH": os.environ["PATH"], "STRIPE_SECRET_KEY": "sk_live_x"}) == ""


def test_make_run_opens_to_the_network_only_when_asked() -> None:
    recipe = subprocess.run(
        ["make", "-n", "run", "HOST=0.0.0.0"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "runserver 0.0.0.0:8000" in recipe


def test_demo_account_prints_links_on_the_site_url(db: None, settings: Any, tmp_path: Path) -> None:
    settings.BASE_DIR, settings.SITE_URL = tmp_path, "http://localhost:18280"
    out = StringIO()
    call_command("demo_account", stdout=out)
    links = re.findall(r"https?://[^\s/']+", out.getvalue())
    assert len(links) == 3
    assert set(links) == {"http://localhost:18280"}


@pytest.mark.e2e
def test_make_run_on_another_port_prints_and_serves_links_on_it(tmp_path: Path, dns_server: DnsServer) -> None:
    """The README's `make run PORT=…` as written, in a copy of the project (it writes var/ and db.sqlite3
    there) whose .venv is this one; stopped by SIGINT, nothing listens after it."""
    copy = project_copy(tmp_path)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "SITE_URL", "DJANGO_SETTINGS_MODULE"}}
    env.update(VERIFIER_DNS_NAMESERVERS=dns_server.address, LOG_LEVEL="WARNING")
    make = subprocess.Popen(
        ["make", "run", f"PORT={port}"],
        cwd=copy,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        # As a script's `make run &` starts it: SIGINT ignored, in make and in all it starts.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        printed = read_until(make, "API docs:")
        wait_for_port(port, process=make)
        links = re.findall(r"https?://[^\s/']+", printed)
        assert len(links) == 3 and set(links) == {f"http://localhost:{port}"}
        try_it = re.search(r"try it:\s+(curl .*)", printed)
        assert try_it is not None
        answer = subprocess.run(["bash", "-c", try_it.group(1)], capture_output=True, text=True, timeout=30)
        assert '"email":"someone@gmail.com"' in answer.stdout
        assert_results_link_follows_port(port, api_key=printed.split("API key:", 1)[1].split()[0])
        os.killpg(make.pid, signal.SIGINT)  # what a script does to stop it
        make.wait(timeout=8)  # runserver stopped, then qcluster (the recipe's trap), then make
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
    finally:
        stop_group(make)


def assert_results_link_follows_port(port: int, *, api_key: str) -> None:
    auth = {"Authorization": f"Bearer {api_key}"}
    base = f"http://localhost:{port}"
    files = {"file": ("list.csv", b"email\njane@good.com\n", "text/csv")}
    job = requests.post(f"{base}/v1/verify/bulk", files=files, headers=auth, timeout=30).json()

    def completed() -> dict[str, Any] | None:
        body = requests.get(f"{base}/v1/jobs/{job['id']}", headers=auth, timeout=10).json()
        return body if body["status"] == "completed" else None

    body = wait_until(completed, "the job to complete", 60, every=0.2)
    assert body["result_download_url"].startswith(f"{base}/")
    assert requests.get(body["result_download_url"], timeout=10).text.startswith("email,status,")
