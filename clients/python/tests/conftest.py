"""The client's suite runs against a live service: runserver and a qcluster started here, as
`make run` starts them, resolving on the project's loopback DNS server (tests/support). One service
for the whole suite: the project's scheduler runs all of it on one xdist worker (tests/conftest.py),
which starts the service once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import dns_server, migrated_sqlite, stack_databases  # noqa: F401 (the project's fixtures, used here)
from tests.support.dns_server import DnsServer
from tests.support.live_stack import LiveService, live_stack


@pytest.fixture(scope="session")
def service(
    tmp_path_factory: pytest.TempPathFactory, dns_server: DnsServer, migrated_sqlite: Path
) -> Iterator[LiveService]:
    tmp = tmp_path_factory.mktemp("client")
    # Callbacks to a receiver on this machine, and retries a test can wait for.
    extra = {"CALLBACK_ALLOW_PRIVATE_NETWORKS": "1", "CALLBACK_RETRY_BASE_SECONDS": "1"}
    with live_stack(tmp, dns_address=dns_server.address, migrated_sqlite=migrated_sqlite, **extra) as live:
        yield live
