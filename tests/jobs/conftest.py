"""Fixtures for bulk jobs: fast password hashing, a private media root, synchronous tasks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django_q.conf import Conf
from django_q.models import Task

from billing.models import LedgerEntry
from jobs.models import Job
from tests.conftest import Persona


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    # The production hasher costs seconds per user on a busy CI box; personas need none of it.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def media(settings: Any, tmp_path: Path) -> Path:
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SITE_URL = "http://testserver"
    settings.CALLBACK_ALLOW_PRIVATE_NETWORKS = False
    return tmp_path / "media"


@pytest.fixture
def run_tasks(monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any) -> Iterator[None]:
    """django-q2 in sync mode, and on_commit callbacks run: queued work happens inline."""
    monkeypatch.setattr(Conf, "SYNC", True)
    with django_capture_on_commit_callbacks(execute=True):
        yield
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
