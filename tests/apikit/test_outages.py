"""An outage of something we depend on (the database, Redis, the media storage) is a 503 the
client may retry, in the contract's error shape with Retry-After; nothing is charged or half
written. Each dependency is made really unreachable: a dead port, an unopenable file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from bench.procs import free_port
from jobs.models import Job
from tests.conftest import Persona, make_persona
from tests.support.db import database_unreachable
from tests.support.portal import logged_in


def assert_unavailable(response: Any) -> None:
    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "service_unavailable"
    assert set(response.json()["error"]) == {"code", "message", "param"}
    assert int(response["Retry-After"]) > 0


def balance(persona: Persona) -> int:
    persona.account.refresh_from_db()
    return persona.account.credit_balance


@pytest.fixture
def opened(transactional_db: None, django_db_serialized_rollback: None) -> Iterator[Persona]:
    """An account opened, then its database made unreachable."""
    persona = make_persona(plan_code="starter", credits=10)
    persona.client = Client(raise_request_exception=False)
    with database_unreachable():
        yield persona


def test_with_the_database_down_the_api_answers_503(opened: Persona) -> None:
    assert_unavailable(opened.verify("jane@good.com"))
    assert_unavailable(opened.get("/v1/account"))


def test_with_the_database_down_a_portal_page_is_a_plain_503(opened: Persona) -> None:
    response = opened.client.get("/dashboard", HTTP_COOKIE="sessionid=anything")
    assert response.status_code == 503 and b"Briefly unavailable" in response.content
    assert response["Retry-After"]


@pytest.fixture
def redis_down(settings: Any) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    settings.REDIS_URL = url
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}


@pytest.mark.usefixtures("redis_down")
def test_with_redis_down_the_api_answers_503_and_charges_nothing(owner: Persona) -> None:
    owner.client = Client(raise_request_exception=False)
    assert_unavailable(owner.verify("jane@good.com"))
    assert_unavailable(owner.post_json("/v1/verify/batch", {"emails": ["a@good.com", "b@good.com"]}))
    assert balance(owner) == 1000


def test_with_the_storage_unwritable_an_upload_is_503_and_leaves_nothing(
    owner: Persona, settings: Any, tmp_path: Path
) -> None:
    (tmp_path / "media").write_text("a file where the folder should be")  # root ignores a read-only mode
    settings.MEDIA_ROOT = str(tmp_path / "media")
    owner.client = Client(raise_request_exception=False)
    upload = SimpleUploadedFile("list.csv", b"email\na@good.com\nb@good.com\n", "text/csv")
    assert_unavailable(owner.client.post("/v1/verify/bulk", {"file": upload}, headers=owner.auth({})))
    assert not Job.objects.filter(account=owner.account).exists()
    assert balance(owner) == 1000


def test_with_the_storage_unwritable_the_portal_upload_is_a_plain_503(
    owner: Persona, settings: Any, tmp_path: Path
) -> None:
    (tmp_path / "media").write_text("a file where the folder should be")
    settings.MEDIA_ROOT = str(tmp_path / "media")
    client = logged_in(owner)
    client.raise_request_exception = False
    upload = SimpleUploadedFile("list.csv", b"email\na@good.com\n", "text/csv")
    response = client.post("/jobs/new", {"file": upload, "validation_mode": "fast"})
    assert response.status_code == 503 and b"Briefly unavailable" in response.content
    assert not Job.objects.filter(account=owner.account).exists()
