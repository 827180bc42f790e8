"""verify_callback accepts the service's real callbacks, by either signature, and nothing forged."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from verifier import CallbackVerificationError, Client, verify_callback

from tests.support.live_stack import LiveService


@pytest.fixture(scope="module")
def delivered(service: LiveService, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[bytes, dict[str, str]]]:
    """One real callback of a test-key job, as a receiver on loopback got it."""
    received: list[tuple[bytes, dict[str, str]]] = []
    arrived = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append((self.rfile.read(int(self.headers["Content-Length"])), dict(self.headers.items())))
            arrived.set()
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    upload = tmp_path_factory.mktemp("callback") / "list.csv"
    upload.write_text("valid@sandbox.example\n")
    with Client(service.account["test_api_key"], base_url=service.base_url) as client:
        client.bulk_submit(upload, callback_url=f"http://127.0.0.1:{server.server_address[1]}/hook")
    arrived.wait(60)
    server.shutdown()
    server.server_close()
    assert received, "no callback arrived"
    yield received[0]


def test_the_standard_webhooks_signature_verifies(
    service: LiveService, delivered: tuple[bytes, dict[str, str]]
) -> None:
    body, headers = delivered
    standard = {k: v for k, v in headers.items() if k.lower().startswith("webhook-")}
    payload = verify_callback(body, standard, service.account["signing_secret"])
    assert (payload["event"], payload["processed"]) == ("bulk.completed", 1)


def test_our_own_signature_verifies(service: LiveService, delivered: tuple[bytes, dict[str, str]]) -> None:
    body, headers = delivered
    ours = {k: v for k, v in headers.items() if not k.lower().startswith("webhook-")}
    assert verify_callback(body, ours, service.account["signing_secret"])["event_id"] == headers["X-Service-Event-Id"]


@pytest.mark.parametrize("keep", ["webhook-", "x-service-"])
def test_a_tampered_body_or_another_secret_is_refused(
    service: LiveService, delivered: tuple[bytes, dict[str, str]], keep: str
) -> None:
    body, headers = delivered
    chosen = {k: v for k, v in headers.items() if k.lower().startswith(keep)}
    with pytest.raises(CallbackVerificationError):
        verify_callback(body.replace(b"completed", b"failed"), chosen, service.account["signing_secret"])
    with pytest.raises(CallbackVerificationError):
        verify_callback(body, chosen, "whsec_" + "A" * 32)


def test_a_stale_callback_is_refused(service: LiveService, delivered: tuple[bytes, dict[str, str]]) -> None:
    body, headers = delivered
    with pytest.raises(CallbackVerificationError, match="tolerance"):
        verify_callback(body, headers, service.account["signing_secret"], now=time.time() + 3600)


def test_no_signature_is_refused(service: LiveService) -> None:
    with pytest.raises(CallbackVerificationError):
        verify_callback(b"{}", {"Content-Type": "application/json"}, service.account["signing_secret"])
