"""A slow mail server costs only the customer who asked: with eight deep verifications of one
account hanging on a tarpit MX, another account's fast verification is answered at once, in the
production shape the README documents (gunicorn -c config/gunicorn.conf.py -w 4, a qcluster)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from bench.procs import Processes, free_port, wait_for_port
from tests.conftest import BASE_ZONE
from tests.support.deep import HELO, SCRIPTS, SENDER, farm_zone
from tests.support.dns_server import DnsServer
from tests.support.mx_farm import MxFarm
from tests.support.stack_db import StackDatabase, StackDatabases
from tests.support.waiting import wait_until
from verification.deep_requests import SLOT_KEY_PREFIX

pytestmark = pytest.mark.e2e
TARPIT = "127.0.0.7"
HANGING = 8
# Per SMTP step: a deep request on the tarpit holds its thread for 2 x this + 4 s.
SMTP_TIMEOUT = 10


@dataclass
class Stack:
    base_url: str
    attacker: str
    victim: str
    farm: MxFarm
    database: StackDatabase


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, stack_databases: StackDatabases) -> Iterator[Stack]:
    """On the suite's kind of database: SQLite alone, or PostgreSQL and Redis (cache and broker)."""
    tmp = tmp_path_factory.mktemp("isolation")
    port = free_port()
    with DnsServer(zone=dict(BASE_ZONE)) as dns, MxFarm(SCRIPTS) as farm, stack_databases.fresh(tmp) as database:
        farm_zone(dns)
        env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "REDIS_URL"}} | {
            **database.env,
            "MEDIA_ROOT": str(tmp / "media"),
            "PORT": str(port),
            "VERIFIER_DNS_NAMESERVERS": dns.address,
            "VERIFIER_DEEP_MODE": "1",
            "VERIFIER_DEEP_REQUESTS_PER_ACCOUNT": str(HANGING),  # all eight hang (the cap has tests of its own)
            "VERIFIER_SMTP_PORT": str(farm.port),
            "VERIFIER_SMTP_TIMEOUT": str(SMTP_TIMEOUT),
            "VERIFIER_SMTP_ALLOW_PRIVATE_NETWORKS": "1",
            "VERIFIER_SMTP_LOCK_DIR": str(tmp / "smtp-slots"),
            "VERIFIER_SMTP_FROM": SENDER,
            "VERIFIER_SMTP_HELO": HELO,
            "LOG_LEVEL": "WARNING",
        }
        with Processes(env=env) as processes:
            keys = [
                json.loads(
                    processes.manage(
                        "create_account", "--email", email, "--plan", "starter", "--credits", "100", "--json"
                    )
                )
                for email in ("attacker@example.com", "victim@example.com")
            ]
            web = processes.start(sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.conf.py", "-w", "4")
            processes.start(sys.executable, "manage.py", "qcluster")
            wait_for_port(port, process=web)
            yield Stack(f"http://127.0.0.1:{port}", keys[0]["api_key"], keys[1]["api_key"], farm, database)


def verify(stack: Stack, key: str, email: str, mode: str = "fast") -> httpx.Response:
    return httpx.post(
        f"{stack.base_url}/v1/verify",
        json={"email": email, "validation_mode": mode},
        headers={"Authorization": f"Bearer {key}"},
        timeout=4 * SMTP_TIMEOUT,
    )


def timed_fast_verifies(stack: Stack, runs: int = 3) -> list[float]:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        response = verify(stack, stack.victim, "jane@good.com")
        timings.append(time.perf_counter() - started)
        assert response.status_code == 200 and response.json()["status"] == "valid"
    return timings


def test_another_accounts_fast_verify_is_answered_while_eight_deep_ones_hang(stack: Stack) -> None:
    idle = timed_fast_verifies(stack)
    answered: list[int] = []

    def hang() -> None:
        try:
            answered.append(verify(stack, stack.attacker, "alice@tarpit.deepfarm.net", "deep").status_code)
        except httpx.HTTPError:
            answered.append(0)

    threads = [threading.Thread(target=hang, daemon=True) for _ in range(HANGING)]
    for thread in threads:
        thread.start()
    wait_until(
        lambda: stack.farm.stats.active[TARPIT] >= 3, "three sessions at the tarpit", 30
    )  # politeness: 3 at once
    assert stack.farm.stats.active[TARPIT] == 3
    # The other five are in the web tier, waiting for a slot at the tarpit: all eight hold an account's
    # deep request slot (verification/deep_requests.py; the victim asks for none).
    wait_until(
        lambda: stack.database.cache_entries(SLOT_KEY_PREFIX) == HANGING, "eight deep requests in the web tier", 30
    )
    beside = timed_fast_verifies(stack)
    print(
        f"\nfast verify, ms: idle {[round(t * 1000) for t in idle]}, beside {HANGING} hanging deep ones "
        f"{[round(t * 1000) for t in beside]}, load {os.getloadavg()[0]:.1f}"
    )
    # Answered while every one of the eight was still waiting on the tarpit.
    assert answered == [] and all(thread.is_alive() for thread in threads)
