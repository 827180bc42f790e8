"""Shared fixtures: a real loopback DNS server, personas, and an API client.

Personas (as in healthchecks' hc/test.py): `owner` is the customer under test,
`outsider` another customer who must never see the owner's data, `staff` runs
the business from the admin.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db.backends.signals import connection_created
from django.test import Client

from bench.procs import interruptible
from tests.factories import UserFactory
from tests.support.personas import Persona, make_persona, sandboxed

__all__ = ["Persona", "make_persona", "sandboxed"]  # tests import them from here too
from tests.support import examples as _examples  # noqa: F401 (registers the `quick` Hypothesis profile)
from tests.support.deep import SCRIPTS, allowances_forgotten, deep_settings, farm_zone
from tests.support.dns_server import A_ONLY, MX, NULL_MX, SERVFAIL, SILENT, DnsServer
from tests.support.metrics import TOKEN as METRICS_TOKEN
from tests.support.mx_farm import MxFarm
from tests.support.stack_db import StackDatabases
from tests.support.template_db import SuiteTestDatabase
from verification.engine import mxhosts

# The browser tests' `chromium` (one a process) and `page` (a fresh context a test) fixtures.
pytest_plugins = ["tests.support.browser"]

# Modules whose tests share one live stack (module-scoped processes or servers): one xdist worker
# runs each of them whole, so its stack starts once; every other test is scheduled on its own.
# xdist sends these first (the largest units); none may hold a transactional test, whose flush
# must come after every plain database test of its worker (pytest-django's order).
ONE_WORKER_MODULES = frozenset(
    {
        "tests/jobs/test_e2e.py",
        "tests/jobs/test_deep_e2e.py",
        "tests/jobs/test_e2e_resolver.py",
        "tests/jobs/test_s3.py",
        "tests/config/test_gunicorn.py",
        "tests/ops/test_metrics_gunicorn.py",
        "tests/docs/test_readme_examples.py",
        "tests/mta/test_matrix.py",
    }
)

# The Python client's suite shares one live service (session-scoped in its conftest): all of it on
# one worker, which starts that service once.
CLIENT_SUITE = "clients/python/tests/"


def _loopback_only(event: str, args: tuple[Any, ...]) -> None:
    """Traffic stays on loopback: a test process never connects to any other address (an audit
    hook sees every socket.connect, aiosmtplib's, dnspython's and asyncio's included)."""
    if event != "socket.connect":
        return
    sock, address = args
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    host = address[0]
    try:
        allowed = ipaddress.ip_address(host).is_loopback
    except ValueError:
        allowed = host == "localhost"
    if not allowed:
        raise ConnectionRefusedError(f"tests stay on loopback: a connection to {address!r} was stopped")


sys.addaudithook(_loopback_only)


def pytest_configure(config: pytest.Config) -> None:
    interruptible()  # live stacks stop on SIGINT however the suite was started (bench/procs.py)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`make test` (a worker a core, and one more) and `make test-all` (a worker a core) run on
    pytest-xdist, scheduled here.

    Not with xdist's own `xdist_group` marks: pytest 9.2 ignores the node ids they rewrite. Tests keep
    pytest-django's order within a worker (transactional ones last)."""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleStacks(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = _module(nodeid)
            if module.startswith(CLIENT_SUITE):
                return CLIENT_SUITE  # one live service for the whole client suite (its conftest)
            return module if module in ONE_WORKER_MODULES else nodeid

    return ModuleStacks(config, log)


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep ONE_WORKER_MODULES' rule checked rather than remembered."""
    for item in items:
        marker = item.get_closest_marker("django_db")
        transactional = bool(marker and marker.kwargs.get("transaction")) or bool(
            {"transactional_db", "live_server"} & set(getattr(item, "fixturenames", ()))
        )
        if transactional and (_module(item.nodeid) in ONE_WORKER_MODULES or item.nodeid.startswith(CLIENT_SUITE)):
            raise pytest.UsageError(f"{item.nodeid}: a transactional test in ONE_WORKER_MODULES (tests/conftest.py)")


# The loopback zone every test starts from. Tests may add names; they are reset after.
BASE_ZONE = {
    "good.com": MX("mx1.good.com", "mx2.good.com"),
    "company.com": MX("mail.company.com"),
    "gmail.com": MX("gmail-smtp-in.l.google.com"),
    "yahoo.com": MX("mta5.am0.yahoodns.net"),
    "mailinator.com": MX("mail.mailinator.com"),
    "sub.mailinator.com": MX("mail.mailinator.com"),
    "aonly.com": A_ONLY,
    "nullmx.com": NULL_MX,
    "servfail.com": SERVFAIL,
    "silent.com": SILENT,
    "xn--mnchen-3ya.de": MX("mx.muenchen.de"),
    "gmsil.com": MX("mx.gmsil.com"),
}


# The SQLite test database starts from a kept migrated copy (tests/support/template_db.py).
_SUITE_DATABASE = SuiteTestDatabase()
connection_created.connect(_SUITE_DATABASE.on_connection)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> None:
    """pytest-django's, then a copy of the freshly migrated database kept for the next run."""
    from django.db import connection

    with django_db_blocker.unblock():
        _SUITE_DATABASE.keep_if_new(connection)


@pytest.fixture(scope="session")
def stack_databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StackDatabases]:
    """Fresh databases for live stacks, of the suite's kind (tests/support/stack_db.py)."""
    databases = StackDatabases(tmp_path_factory.mktemp("stack-databases"), os.environ.get("DATABASE_URL", ""))
    yield databases
    databases.close()


@pytest.fixture(scope="session")
def migrated_sqlite(stack_databases: StackDatabases) -> Path:
    """A SQLite file with every migration applied, made once a worker, for the stacks that run on
    SQLite whatever the suite runs on: they start from a copy of it instead of migrating."""
    return stack_databases.migrated_sqlite()


@pytest.fixture(scope="session")
def dns_server() -> Iterator[DnsServer]:
    with DnsServer(zone=dict(BASE_ZONE)) as server:
        yield server


@pytest.fixture(scope="session")
def farm() -> Iterator[MxFarm]:
    """The MX farm of the deep-verification tests (tests/support/deep.py), started once."""
    with MxFarm(SCRIPTS) as running:
        yield running


@pytest.fixture
def deep_farm(settings: Any, farm: MxFarm, tmp_path: Path, _resolver_on_loopback: DnsServer) -> Iterator[MxFarm]:
    """Deep mode on, pointed at the farm, its domains in DNS; no DATA or VRFY ever reaches it."""
    deep_settings(settings, farm.port, tmp_path / "smtp-slots")
    allowances_forgotten(settings)
    farm_zone(_resolver_on_loopback)
    farm.reset()
    yield farm
    assert farm.stats.commands["DATA"] == 0 and farm.stats.commands["VRFY"] == 0


@pytest.fixture(autouse=True)
def _bulk_tasks_keep_the_test_process_priority(settings: Any) -> None:
    # Tasks run in this process here; at the bulk niceness they would lower it, and with it every
    # server a later test starts (the e2e web server must run at 0). Real workers keep the default.
    settings.BULK_WORKER_NICENESS = 0


@pytest.fixture(autouse=True)
def _committed_cache_cleared(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test with committed data leaves its cache entries behind (the database cache's table is no
    model, so the flush after it keeps them): they are cleared, as its rows are."""
    yield
    marker = request.node.get_closest_marker("django_db")
    if marker and marker.kwargs.get("transaction"):
        from django.core.cache import cache

        cache.clear()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # The production hasher takes seconds per password on a small CI machine.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _resolver_on_loopback(settings: Any, dns_server: DnsServer) -> Iterator[DnsServer]:
    settings.VERIFIER_DNS_NAMESERVERS = [dns_server.address]
    settings.VERIFIER_DNS_TIMEOUT = 0.3
    settings.VERIFIER_DNS_LIFETIME = 0.3
    yield dns_server
    dns_server.zone.clear()
    dns_server.zone.update(BASE_ZONE)
    mxhosts.forget()  # the addresses this process remembers of the hosts the test named
    dns_server.delay = 0.0
    dns_server.everything = None
    dns_server.loss, dns_server.max_qps = 0.0, None


@pytest.fixture
def owner(db: None) -> Persona:
    return make_persona(plan_code="starter", credits=1000)


@pytest.fixture
def outsider(db: None) -> Persona:
    return make_persona(plan_code="starter", credits=1000)


@pytest.fixture
def staff(db: None) -> Any:
    return UserFactory(email="staff@service.example.com", is_staff=True, is_superuser=True)


@pytest.fixture
def admin_client_(staff: Any) -> Client:
    client = Client()
    client.force_login(staff)
    return client


@pytest.fixture
def metrics_on(settings: Any) -> None:
    settings.METRICS_TOKEN = METRICS_TOKEN
