"""LOG_FORMAT=json: one JSON object per line, with request id, account id and timing, and no secrets."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from lib.logs import JsonFormatter
from tests.conftest import Persona
from tests.support.portal import logged_in

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def json_lines(settings: Any) -> Iterator[io.StringIO]:
    settings.LOG_FORMAT = "json"
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)
    yield stream
    root.removeHandler(handler)


def records(stream: io.StringIO, logger: str = "verifier.requests") -> list[dict[str, Any]]:
    parsed = [json.loads(line) for line in stream.getvalue().splitlines()]
    return [entry for entry in parsed if entry["logger"] == logger]


def test_an_api_request_logs_one_line_with_request_id_account_and_timing(
    json_lines: io.StringIO, owner: Persona
) -> None:
    response = owner.verify("jane.doe@good.com")
    [line] = records(json_lines)
    assert line["request_id"] == response["X-Request-Id"]
    assert line["account_id"] == owner.account.pk
    assert (line["method"], line["path"], line["view"], line["status"]) == ("POST", "/v1/verify", "api-verify", 200)
    assert isinstance(line["duration_ms"], float)
    assert owner.api_key not in json_lines.getvalue()
    assert "jane.doe" not in json_lines.getvalue()


def test_a_portal_request_logs_the_session_users_account(json_lines: io.StringIO, owner: Persona) -> None:
    logged_in(owner).get(reverse("dashboard"))
    [line] = records(json_lines)
    assert line["account_id"] == owner.account.pk


def test_an_anonymous_request_logs_no_account(json_lines: io.StringIO, db: None) -> None:
    Client().get("/healthz")
    [line] = records(json_lines)
    assert line["account_id"] is None
    assert line["request_id"].startswith("req_")


def test_addresses_and_keys_are_redacted_whoever_logs_them(json_lines: io.StringIO) -> None:
    logging.getLogger("anywhere").warning("key ev_live_AbCdEfGhIjKl for jane.doe@good.com, secret whsec_XyZw1234")
    [line] = records(json_lines, "anywhere")
    assert line["message"] == "key ev_live_AbCd… for j***@good.com, secret whsec_XyZw…"


def test_no_request_line_in_plain_format(settings: Any, owner: Persona, caplog: pytest.LogCaptureFixture) -> None:
    settings.LOG_FORMAT = "plain"
    with caplog.at_level(logging.INFO, logger="verifier.requests"):
        owner.verify("jane@good.com")
    assert not [r for r in caplog.records if r.name == "verifier.requests"]


def run_logging(log_format: str) -> subprocess.CompletedProcess[str]:
    code = "import django, logging; django.setup(); logging.getLogger('verifier.x').warning('hello a@b.com')"
    env = {**os.environ, "LOG_FORMAT": log_format, "DJANGO_SETTINGS_MODULE": "config.settings"}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def test_the_setting_makes_every_line_of_a_process_json() -> None:
    done = run_logging("json")
    assert done.returncode == 0, done.stderr
    [line] = [json.loads(text) for text in done.stderr.splitlines()]
    assert (line["level"], line["logger"], line["message"]) == ("WARNING", "verifier.x", "hello a***@b.com")


def test_an_unknown_log_format_stops_the_process() -> None:
    done = run_logging("xml")
    assert done.returncode != 0
    assert "LOG_FORMAT must be 'plain' or 'json'" in done.stderr


def test_the_development_servers_lines_for_static_files_are_left_out_and_the_rest_kept() -> None:
    from lib.logs import NoStaticRequests

    def record(line: str, level: int = logging.INFO) -> logging.LogRecord:
        return logging.LogRecord("django.server", level, __file__, 1, '"%s" %s %s', (line, "200", "512"), None)

    kept = NoStaticRequests().filter
    assert not kept(record("GET /static/css/app.css HTTP/1.1"))
    assert kept(record("GET /signup HTTP/1.1")) and kept(record("GET /static/missing.css HTTP/1.1", logging.WARNING))
