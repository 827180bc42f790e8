"""Fixtures for bulk jobs: a private media root, synchronous tasks, a callback receiver."""

from __future__ import annotations

import ast
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from django_q.conf import Conf
from django_q.models import Schedule, Task

from billing.models import LedgerEntry
from jobs import tasks
from jobs.chunk_runs import MAX_CHUNK_ATTEMPTS, chunk_claim
from jobs.models import Job
from tests.conftest import Persona


@pytest.fixture(autouse=True)
def media(settings: Any, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SITE_URL = "http://testserver"
    settings.CALLBACK_ALLOW_PRIVATE_NETWORKS = False
    return tmp_path / "media"


RunTasks = Callable[[], AbstractContextManager[Any]]


@pytest.fixture
def run_tasks(monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any) -> Iterator[RunTasks]:
    """django-q2 in sync mode; inside `with run_tasks():` work queued on commit runs at the block's end."""
    monkeypatch.setattr(Conf, "SYNC", True)
    yield lambda: django_capture_on_commit_callbacks(execute=True)
    failures = list(Task.objects.filter(success=False).values_list("func", "result"))
    assert not failures, failures


def upload(
    persona: Persona,
    content: bytes,
    *,
    name: str = "list.csv",
    callback_url: str | None = None,
    idempotency_key: str | None = None,
) -> Any:
    data: dict[str, Any] = {"file": SimpleUploadedFile(name, content, "text/csv")}
    if callback_url is not None:
        data["callback_url"] = callback_url
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    return persona.client.post("/v1/verify/bulk", data=data, headers=persona.auth(headers))


def stored_files(media: Path) -> list[Path]:
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


def assert_nothing_left(persona: Persona, media: Path, ledger_before: int) -> None:
    assert Job.objects.count() == 0
    assert stored_files(media) == []
    assert LedgerEntry.objects.filter(account=persona.account).count() == ledger_before


def ledger_sum(persona: Persona) -> int:
    return sum(LedgerEntry.objects.filter(account=persona.account).values_list("amount", flat=True))


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    path: str = ""
    method: str = "POST"

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """A real HTTP server on loopback that answers callbacks with the statuses it is given."""

    url: str
    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)


@pytest.fixture
def receiver(settings: Any) -> Iterator[Receiver]:
    settings.CALLBACK_ALLOW_PRIVATE_NETWORKS = True
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            state.received.append(Received(dict(self.headers.items()), body, self.path, self.command))
            self.send_response(state.statuses.pop(0) if state.statuses else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST  # an SNS subscription's confirmation link (tests/feedback)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # A short poll: shutdown() waits for the loop to look, 0.5 s a test by default.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/bulk"
    yield state
    server.shutdown()
    server.server_close()


def crash_chunk_repeatedly(chunk_id: int) -> datetime:
    """Claim a chunk as often as it may be tried, letting each lease expire as a dead worker's would.

    Returns a moment after the last lease ran out: the next run there is the one that gives up.
    """
    now = timezone.now()
    for crash in range(MAX_CHUNK_ATTEMPTS):
        with time_machine.travel(now + timedelta(seconds=200 * crash)):
            assert chunk_claim(chunk_id=chunk_id) is not None
    return now + timedelta(seconds=200 * MAX_CHUNK_ATTEMPTS + 400)


def run_due_schedules() -> int:
    """What the django-q2 scheduler does: run each ONCE schedule that is due, then drop it."""
    due = list(Schedule.objects.filter(next_run__lte=timezone.now(), schedule_type=Schedule.ONCE))
    for entry in due:
        assert entry.func == "jobs.tasks.deliver_callback"
        tasks.deliver_callback(*ast.literal_eval(entry.args))  # django-q stores args as a repr
        entry.delete()
    return len(due)


def run_schedules_as_they_fall_due() -> None:
    while entry := Schedule.objects.filter(schedule_type=Schedule.ONCE).order_by("next_run").first():
        with time_machine.travel(entry.next_run):
            run_due_schedules()
