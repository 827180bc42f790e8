"""Fixtures of the verification tests that more than one module uses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from tests.support.dns_server import MX, DnsServer
from tests.support.personas import Persona

REDIS_URL = "redis://127.0.0.1:6379/14"


@pytest.fixture
def shared_redis() -> Iterator[redis.Redis]:
    """The Redis the lease tests share with other test processes: each test keys its leases by an
    egress name of its own, and leases expire by themselves, so nothing is flushed."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError:
        pytest.skip("no Redis on 127.0.0.1:6379 (CI always has one)")
    yield client
    client.close()


def deep(persona: Persona, email: str) -> dict[str, Any]:
    response = persona.post_json("/v1/verify", {"email": email, "validation_mode": "deep"})
    assert response.status_code == 200, response.content
    return response.json()


def verdict_of(body: dict[str, Any]) -> tuple[Any, ...]:
    checks = body["checks"]
    return body["status"], body["sub_status"], body["is_valid"], checks["smtp_valid"], checks["is_catch_all"]


@pytest.fixture
def second_server() -> Iterator[DnsServer]:
    with DnsServer(default=lambda name: MX("backup-mx." + name)) as server:
        yield server
