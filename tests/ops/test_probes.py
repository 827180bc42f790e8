"""GET /healthz and /readyz (README, "Operations"): each readiness check failing for real, in turn.

The healthy-worker case needs a real qcluster: tests/ops/test_metrics_gunicorn.py starts one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from bench.procs import free_port
from tests.support.db import database_unreachable
from tests.support.metrics import scrape

REDIS_TEST_DB = 15


def readyz(client: Client | None = None) -> tuple[int, dict[str, Any]]:
    response = (client or Client()).get("/readyz")
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response["Cache-Control"].startswith("max-age=0")
    return response.status_code, response.json()


def redis_cache(url: str) -> dict[str, Any]:
    return {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}


@pytest.fixture
def database_down(transactional_db: None, django_db_serialized_rollback: None) -> Iterator[None]:
    """The default connection pointed at a closed loopback port (PostgreSQL) or an unopenable file (SQLite).

    Out of a transaction, so committed: serialized rollback puts back what the flush takes (tests/support/db.py).
    """
    with database_unreachable():
        yield


def test_healthz_answers_ok_without_authentication() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_names_each_check_and_is_503_without_a_qcluster(db: None) -> None:
    status, body = readyz()
    assert status == 503
    assert body == {
        "status": "unavailable",
        "checks": {
            "database": "ok",
            "storage": "ok",
            "workers": "no qcluster heartbeat in the last 2 minutes",
            "dns": "ok",
        },
    }


def test_readyz_reports_the_database_down(database_down: None) -> None:
    status, body = readyz()
    assert status == 503
    assert body["checks"]["database"] == "failed: OperationalError"


def test_readyz_checks_redis_only_when_configured(db: None, settings: Any) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:6379/{REDIS_TEST_DB}"
    settings.CACHES = redis_cache(settings.REDIS_URL)
    assert readyz()[1]["checks"]["cache"] == "ok"


def test_readyz_reports_redis_down(db: None, settings: Any) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/{REDIS_TEST_DB}"
    settings.CACHES = redis_cache(settings.REDIS_URL)
    status, body = readyz()
    assert status == 503
    assert body["checks"]["cache"] == "failed: ConnectionError"
    assert str(settings.REDIS_URL) not in str(body)


def test_readyz_reports_storage_that_cannot_be_written(db: None, settings: Any, tmp_path: Path) -> None:
    # Tests run as root, whom a read-only mode does not stop: a file where the folder should be does.
    (tmp_path / "media").write_text("not a folder")
    settings.MEDIA_ROOT = str(tmp_path / "media")
    status, body = readyz()
    assert status == 503
    assert body["checks"]["storage"].startswith("failed: ")
    assert "media" not in body["checks"]["storage"]


def test_readyz_leaves_no_probe_files_behind(db: None, settings: Any, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = str(tmp_path)
    assert readyz()[1]["checks"]["storage"] == "ok"
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics"])
def test_probes_refuse_writes(path: str) -> None:
    assert Client(enforce_csrf_checks=True).post(path).status_code == 405  # not the CSRF check's 403 page


def test_probes_answer_over_plain_http_when_https_is_enforced(db: None, settings: Any) -> None:
    settings.SECURE_SSL_REDIRECT = True
    assert Client().get("/healthz").status_code == 200
    assert Client().get("/login").status_code == 301


def test_metrics_with_the_database_down_serve_the_process_counters_without_its_gauges(
    metrics_on: None, database_down: None
) -> None:
    samples = scrape()  # a 200 in Prometheus' format
    names = {name for name, _ in samples}
    assert "verifier_http_request_duration_seconds_count" in names  # this process's own
    assert not names & {"verifier_queue_depth", "verifier_queue_oldest_seconds", "verifier_dns_resolver_broken"}
