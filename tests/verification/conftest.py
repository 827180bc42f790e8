"""Fixtures of the verification tests that more than one module uses."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

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
