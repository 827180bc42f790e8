"""The production web server as the README starts it: gunicorn with config/gunicorn.conf.py.

Requests gunicorn refuses before Django runs (an over-long URL, a control character in a
header, too many or too large headers) are answered in the contract's error shape too.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.procs import Processes, free_port, wait_for_port
from tests.support.dns_server import DnsServer

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Gunicorn:
    port: int
    api_key: str


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, migrated_sqlite: Path, dns_server: DnsServer) -> Iterator[Gunicorn]:
    port = free_port()
    database = tmp_path_factory.mktemp("gunicorn") / "db.sqlite3"
    shutil.copyfile(migrated_sqlite, database)
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "VERIFIER_DNS_NAMESERVERS": dns_server.address}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    with Processes(env=env) as processes:
        opened = json.loads(processes.manage("create_account", "--email", "g@example.com", "--credits", "10", "--json"))
        argv = ["-c", "config/gunicorn.conf.py", "-b", f"127.0.0.1:{port}", "-w", "1"]
        server = processes.start(sys.executable, "-m", "gunicorn", *argv)
        wait_for_port(port, process=server)
        yield Gunicorn(port, opened["api_key"])


@pytest.fixture
def gunicorn(live: Gunicorn) -> int:
    return live.port


def exchange(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes (no client library would send these), read the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def get(path: bytes, *headers: bytes) -> bytes:
    return b"GET " + path + b" HTTP/1.1\r\nHost: localhost\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n"


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (get(b"/v1/jobs/" + b"a" * 9000), 414, "uri_too_long"),
        (get(b"/v1/jobs", b"X-Note: a\x7fb"), 400, "invalid_request"),
        (get(b"/v1/jobs", b"X-Note: a\x00b"), 400, "invalid_request"),
        (get(b"/v1/jobs", b"X-Note: " + b"a" * 9000), 431, "request_headers_too_large"),
        (get(b"/v1/jobs", *[b"X-N%d: a" % i for i in range(120)]), 431, "request_headers_too_large"),
        (b"GET /v1/jobs HTTP/9.9\r\nHost: localhost\r\n\r\n", 400, "invalid_request"),
    ],
    ids=["url-over-8kb", "header-with-del", "header-with-nul", "header-over-8kb", "120-headers", "bad-version"],
)
def test_requests_gunicorn_refuses_get_the_contract_error_shape(
    gunicorn: int, request_bytes: bytes, status: int, code: str
) -> None:
    got_status, headers, body = exchange(gunicorn, request_bytes)
    assert got_status == status
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert headers["x-request-id"].startswith("req_")
    error = json.loads(body)["error"]
    assert (error["code"], error["param"]) == (code, None)
    assert set(error) == {"code", "message", "param"}


def test_a_url_within_the_limit_reaches_the_service(gunicorn: int) -> None:
    status, headers, body = exchange(gunicorn, get(b"/v1/" + b"a" * 8000))
    assert status == 404
    assert json.loads(body)["error"]["code"] == "not_found"


def test_a_request_gunicorn_accepts_is_answered_by_django(gunicorn: int) -> None:
    status, headers, body = exchange(gunicorn, get(b"/v1/jobs", b"Connection: close"))
    assert status == 401
    assert headers["www-authenticate"].startswith("Bearer")
    assert json.loads(body)["error"]["code"] == "authentication_required"


def test_a_chunked_request_body_is_read_whole(live: Gunicorn) -> None:
    body = b'{"email": "jane@good.com"}'
    request = (
        b"POST /v1/verify HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        b"Authorization: Bearer " + live.api_key.encode() + b"\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"%x\r\n" % 10
        + body[:10]
        + b"\r\n"
        + b"%x\r\n" % (len(body) - 10)
        + body[10:]
        + b"\r\n0\r\n\r\n"
    )
    status, headers, answer = exchange(live.port, request)
    assert status == 200, answer
    assert json.loads(answer)["status"] == "valid"
    assert headers["x-credits-remaining"] == "9"
