"""The real MTAs of the matrix (README.md here), each started once a session, and deep mode pointed at them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# The bulk deep jobs of the matrix, and the HTTP receiver of verification.resolved events.
from tests.jobs.conftest import media, receiver, run_tasks  # noqa: F401
from tests.support.deep import deep_settings, farm_zone
from tests.support.dns_server import DnsServer
from tests.support.mta import (
    EXIM,
    EXIM_ADDRESS,
    POSTFIX,
    POSTFIX_ADDRESSES,
    POSTGREY,
    Exim,
    Postfix,
    free_port,
    require,
)

# Every case's domain and the address of its listener (postfix/master.cf, exim/exim.conf).
LISTENERS = {
    "mailbox": "127.0.3.1",
    "catchall": "127.0.3.1",
    "client-reject": "127.0.3.2",
    "helo": "127.0.3.3",
    "reverse-name": "127.0.3.4",
    "client-name": "127.0.3.5",
    "rate-limit": "127.0.3.6",
    "error-limit": "127.0.3.7",
    "recipient-limit": "127.0.3.8",
    "starttls": "127.0.3.9",
    "greylist": "127.0.3.10",
    "postscreen": "127.0.3.11",
    "egress": "127.0.3.12",
    "rate-limit-job": "127.0.3.13",
    "exim": EXIM_ADDRESS,
}


@pytest.fixture(scope="session")
def mta_port() -> int:
    return free_port([*POSTFIX_ADDRESSES, EXIM_ADDRESS])


@pytest.fixture(scope="session")
def postfix(mta_port: int) -> Iterator[Postfix]:
    require(POSTFIX, POSTGREY)
    with Postfix(mta_port) as server:
        yield server


@pytest.fixture
def fresh_postfix() -> Iterator[Postfix]:
    """A Postfix of its own on a port of its own: its anvil's 60 s window (the connection rate
    limit's) starts empty, whatever the session's Postfix was asked before."""
    require(POSTFIX, POSTGREY)
    with Postfix(free_port(POSTFIX_ADDRESSES)) as server:
        yield server


@pytest.fixture(scope="session")
def exim(mta_port: int) -> Iterator[Exim]:
    require(EXIM)
    with Exim(mta_port) as server:
        yield server


@pytest.fixture
def on_mtas(settings: Any, mta_port: int, tmp_path: Path, _resolver_on_loopback: DnsServer) -> DnsServer:
    """Deep mode on, its sessions to the MTAs' port; each case's domain in the loopback DNS."""
    deep_settings(settings, mta_port, tmp_path / "smtp-slots")
    farm_zone(_resolver_on_loopback, {f"{case}.mtamatrix.net": [address] for case, address in LISTENERS.items()})
    return _resolver_on_loopback
