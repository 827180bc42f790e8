"""The client's typed calls, retries and idempotency, against a live service."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from verifier import Client, VerifierError

from tests.support.live_stack import LiveService


def live(service: LiveService, **kwargs: object) -> Client:
    return Client(service.api_key, base_url=service.base_url, **kwargs)  # type: ignore[arg-type]


def test(service: LiveService, **kwargs: object) -> Client:
    return Client(service.account["test_api_key"], base_url=service.base_url, **kwargs)  # type: ignore[arg-type]


test.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def test_verify_answers_a_typed_result_and_notes_balance_and_rate(service: LiveService) -> None:
    with live(service) as client:
        result = client.verify("Jane@Good.com")
        assert (result["email"], result["status"], result["checks"]["mx_found"]) == ("jane@good.com", "valid", True)
        assert client.credits_remaining is not None and client.credits_remaining < 1000
        assert client.rate_limit is not None and client.rate_limit.limit == 20


def test_verify_batch_answers_in_order(service: LiveService) -> None:
    with live(service) as client:
        results = client.verify_batch(["b@good.com", "nope", "x@nowhere-at-all.com"])
    assert [(r["email"], r["status"]) for r in results] == [
        ("b@good.com", "valid"),
        ("nope", "invalid"),
        ("x@nowhere-at-all.com", "invalid"),
    ]


def test_verify_many_sends_batches_of_100(service: LiveService) -> None:
    emails = [f"user{i}@sandbox.example" for i in range(230)] + ["valid@sandbox.example"]
    with test(service) as client:
        results = list(client.verify_many(emails))
    assert [r["email"] for r in results] == emails
    assert results[-1]["status"] == "valid"


def test_account_says_which_key_called(service: LiveService) -> None:
    with test(service) as client:
        account = client.account()
    assert (account["key"]["mode"], account["plan"]["code"]) == ("test", "starter")
    assert account["id"] == service.account["account_id"]


def test_errors_raise_with_the_apis_code_and_param(service: LiveService) -> None:
    with live(service) as client, pytest.raises(VerifierError) as refused:
        client.verify_batch([])
    assert (refused.value.status, refused.value.code, refused.value.param) == (400, "invalid_request", "emails")
    with Client("ev_live_nope", base_url=service.base_url) as stranger, pytest.raises(VerifierError) as unknown:
        stranger.account()
    assert (unknown.value.status, unknown.value.code) == (401, "invalid_api_key")


def test_a_verification_asked_again_is_read_and_a_test_key_finds_none(service: LiveService) -> None:
    with test(service) as client, pytest.raises(VerifierError) as missing:
        client.verification("ver_nosuchverification")
    assert (missing.value.status, missing.value.code) == (404, "not_found")


def test_a_deep_bulk_job_says_so(service: LiveService, tmp_path: Path) -> None:
    upload = tmp_path / "list.csv"
    upload.write_text("email\nvalid@sandbox.example\n")
    with live(service) as client, pytest.raises(VerifierError) as refused:
        client.bulk_preview(upload, validation_mode="deep")  # deep mode is off on this service
    assert (refused.value.code, refused.value.param) == ("deep_mode_disabled", "validation_mode")
    with test(service) as client:  # the sandbox answers deep whatever the switch
        assert client.bulk_preview(upload, validation_mode="deep")["unique"] == 1
        receipt = client.bulk_submit(upload, validation_mode="deep")
        job = client.wait_for_job(receipt["id"], poll_seconds=0.2, timeout=60)
        assert (job["status"], job["validation_mode"]) == ("completed", "deep")


def test_a_test_key_bulk_job_from_upload_to_results(service: LiveService, tmp_path: Path) -> None:
    upload = tmp_path / "list.csv"
    upload.write_text("email\nvalid@sandbox.example\ninvalid@sandbox.example\n")
    with test(service) as client:
        assert client.bulk_preview(upload)["unique"] == 2
        receipt = client.bulk_submit(upload)
        job = client.wait_for_job(receipt["id"], poll_seconds=0.2, timeout=60)
        assert (job["status"], job["progress"]["processed"]) == ("completed", 2)
        assert (
            client.job_results(job["id"], status=["invalid"])
            .decode()
            .splitlines()[1]
            .startswith("invalid@sandbox.example,invalid,mailbox_not_found")
        )
        assert receipt["id"] in [j["id"] for j in client.iter_jobs()]
        client.delete_job(receipt["id"])
        with pytest.raises(VerifierError) as gone:
            client.job(receipt["id"])
    assert gone.value.code == "not_found"


@dataclass
class Front:
    """A loopback front for the service that answers the first requests itself (statuses given),
    or forwards them and loses the answer, then passes the rest through: what retries are for."""

    target: str
    answers: list[int] = field(default_factory=list)  # a status to answer, or 0: forward, then answer 502
    seen: list[dict[str, str]] = field(default_factory=list)
    url: str = ""


@pytest.fixture
def front(service: LiveService) -> Iterator[Front]:
    state = Front(target=service.base_url)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self._handle()

        def do_GET(self) -> None:
            self._handle()

        def _handle(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            state.seen.append(dict(self.headers.items()))
            answer = state.answers.pop(0) if state.answers else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in {"host", "content-length"}}
            if answer is None or answer == 0:
                forwarded = httpx.request(self.command, state.target + self.path, content=body, headers=headers)
                status, content, extra = forwarded.status_code, forwarded.content, dict(forwarded.headers)
                if answer == 0:
                    status, content, extra = 502, b"lost", {}
            else:
                status, content, extra = answer, b'{"error": {"code": "x", "message": "y", "param": null}}', {}
                if answer == 429:
                    extra = {"Retry-After": "1"}
            self.send_response(status)
            for name, value in extra.items():
                if name.lower() not in {"content-length", "transfer-encoding", "connection", "content-encoding"}:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


def test_a_429_is_retried_after_the_retry_after_it_names(service: LiveService, front: Front) -> None:
    front.answers = [429]
    with Client(service.api_key, base_url=front.url, backoff_seconds=0.01) as client:
        started = time.monotonic()
        assert client.verify("c@good.com")["status"] == "valid"
        assert time.monotonic() - started >= 1.0
    assert len(front.seen) == 2


def test_5xx_is_retried_with_backoff_then_given_up(service: LiveService, front: Front) -> None:
    front.answers = [503, 500]
    with Client(service.api_key, base_url=front.url, backoff_seconds=0.01) as client:
        assert client.account()["plan"]["code"] == "starter"
    front.answers = [503, 503, 503]
    client = Client(service.api_key, base_url=front.url, backoff_seconds=0.01, max_retries=2)
    with client, pytest.raises(VerifierError) as failed:
        client.account()
    assert failed.value.status == 503 and len(front.seen) == 2 + 1 + 3


def test_a_retried_verification_is_charged_once(service: LiveService, front: Front) -> None:
    front.answers = [0]  # the first attempt reaches the service, its answer is lost
    with live(service) as direct:
        before = direct.account()["credits_remaining"]
    with Client(service.api_key, base_url=front.url, backoff_seconds=0.01) as client:
        assert client.verify("d@good.com")["status"] == "valid"
    keys = [headers["Idempotency-Key"] for headers in front.seen]
    assert len(keys) == 2 and keys[0] == keys[1] and keys[0].startswith("py-")
    with live(service) as direct:
        assert direct.account()["credits_remaining"] == before - 1


def test_waiting_for_a_job_polls_quickly_first_then_every_poll_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job of a few rows is seen done a fraction of a second after it is, a long one is asked
    about once every `poll_seconds` (the polls here answered by a script, the pauses recorded)."""
    pauses: list[float] = []
    monkeypatch.setattr("verifier.client.time.sleep", pauses.append)
    statuses = iter(["pending", "processing", "processing", "processing", "processing", "processing", "completed"])
    with Client("ev_test_x", base_url="http://127.0.0.1:9") as client:
        monkeypatch.setattr(client, "job", lambda job_id: {"id": job_id, "status": next(statuses)})
        assert client.wait_for_job("job_1", poll_seconds=1.0)["status"] == "completed"
        assert pauses == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
        pauses.clear()
        statuses = iter(["pending", "pending", "pending", "pending", "failed"])
        assert client.wait_for_job("job_2", poll_seconds=0.25)["status"] == "failed"
        assert pauses == [0.1, 0.2, 0.25, 0.25]
