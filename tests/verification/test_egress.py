"""SMTP egresses against the MX farm (docs/deep.md, "Egresses" and "More than one machine"):
sessions leave from several source addresses or SOCKS5 proxies, each with its own EHLO name; an
egress refused for its reputation is rested and its work carried by another; politeness counts
per egress across machines (Redis leases, which a dead process cannot hold for long)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
from django.test import Client

from tests.support.deep import domains_on, prober
from tests.support.dns_server import DnsServer
from tests.support.metrics import scrape, value
from tests.support.mx_farm import MxFarm
from tests.support.socks5 import Socks5Server
from tests.support.waiting import wait_until_async
from tests.verification.conftest import REDIS_URL
from verification.deep import deep_verify_many
from verification.egresses import egress_health_all
from verification.engine.egress import EgressError, helo_problem, is_reputation_refusal, parse_egresses
from verification.engine.leases import RedisLeases, lease_key
from verification.engine.smtp import Session
from verification.engine.smtp_replies import Meaning, Reply

SLOW = "127.0.0.13"  # answers every command 50 ms late
MAILBOX = "127.0.0.2"  # alice exists, others do not
A, B = "127.0.0.50", "127.0.0.51"
TWO = f"bind:{A}|helo=a.deep-sender.net,bind:{B}|helo=b.deep-sender.net"


@pytest.fixture
def zone(deep_farm: MxFarm, _resolver_on_loopback: DnsServer) -> DnsServer:
    return _resolver_on_loopback


def own_egress() -> str:
    return f"bind:{A}-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize(
    "spec",
    [
        "bind:nowhere",
        "socks5://proxy",
        "http://proxy:8080",
        f"bind:{A}|ehlo=x",
        f"bind:{A}|helo=not a name",
        f"bind:{A},bind:{A}",
    ],
)
def test_a_mistyped_egress_is_refused_naming_it(spec: str) -> None:
    with pytest.raises(EgressError, match="VERIFIER_SMTP_EGRESS"):
        parse_egresses(spec)


def test_the_egress_list_reads_bind_and_socks5_each_with_its_ehlo_name() -> None:
    bound, proxied = parse_egresses(f"bind:{A}|helo=a.deep-sender.net, socks5://127.0.0.1:1080")
    assert (bound.name, bound.bind, bound.helo) == (f"bind:{A}", A, "a.deep-sender.net")
    assert (proxied.name, proxied.proxy, proxied.helo) == ("socks5://127.0.0.1:1080", "socks5://127.0.0.1:1080", "")
    assert [egress.name for egress in parse_egresses("")] == ["direct"]


def test_the_documented_egress_list_is_read_as_three_egresses() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "deep.md").read_text()
    spec = re.search(r'^VERIFIER_SMTP_EGRESS="([^"]+)"$', text, re.MULTILINE)
    assert spec is not None
    egresses = parse_egresses(spec.group(1))
    assert [(e.bind, e.proxy, e.helo) for e in egresses] == [
        ("203.0.113.7", "", "mx1.verifier.example"),
        ("203.0.113.8", "", "mx2.verifier.example"),
        ("", "socks5://10.0.0.5:1080", "mx3.verifier.example"),
    ]


def test_sessions_are_spread_over_the_bind_egresses_each_saying_its_own_ehlo_name(
    zone: DnsServer, farm: MxFarm, tmp_path: Path
) -> None:
    domains = domains_on(zone, SLOW, 12, "spread")
    work = {(f"mx1.{d}", f"mx2.{d}"): [f"alice@{d}"] for d in domains}
    findings = asyncio.run(prober(zone, farm, tmp_path, egress=TWO).ask(work, timeout=30))
    assert {answer.meaning for answer in findings.answers.values()} == {Meaning.ACCEPTED}
    assert farm.stats.by_source[(A, SLOW)] == farm.stats.by_source[(B, SLOW)] == 6
    assert set(farm.stats.helos) == {(A, "a.deep-sender.net"), (B, "b.deep-sender.net")}
    # Politeness is per egress: each source address up to the cap, as the MX counts them.
    assert farm.stats.peak_by_source[(A, SLOW)] <= 3 and farm.stats.peak_by_source[(B, SLOW)] <= 3


def test_a_socks5_egress_carries_its_sessions(zone: DnsServer, farm: MxFarm, tmp_path: Path) -> None:
    with Socks5Server() as socks:
        work = {("mx1.mailbox.deepfarm.net",): ["alice@mailbox.deepfarm.net"]}
        findings = asyncio.run(prober(zone, farm, tmp_path, egress=f"{socks.url}|helo=p.deep-sender.net").ask(work, 30))
    assert findings.answers["alice@mailbox.deepfarm.net"].meaning is Meaning.ACCEPTED
    assert socks.destinations == [(MAILBOX, farm.port)]
    assert [name for _, name in farm.stats.helos] == ["p.deep-sender.net"]


def test_a_session_refused_for_its_egress_is_asked_again_through_another_before_judging(
    zone: DnsServer, farm: MxFarm, tmp_path: Path
) -> None:
    farm.blocked_sources.add(A)
    domains = domains_on(zone, MAILBOX, 6, "listed-egress")
    work = {(f"mx1.{d}", f"mx2.{d}"): [f"alice@{d}", f"bob@{d}"] for d in domains}
    findings = asyncio.run(prober(zone, farm, tmp_path, egress=TWO).ask(work, timeout=30))
    meanings = {email: answer.meaning for email, answer in findings.answers.items()}
    assert {meanings[f"alice@{d}"] for d in domains} == {Meaning.ACCEPTED}
    assert {meanings[f"bob@{d}"] for d in domains} == {Meaning.NO_MAILBOX}
    assert farm.stats.by_source[(B, MAILBOX)] == 6  # every group answered through B
    assert findings.egress_refused[f"bind:{A}"] == farm.stats.by_source[(A, MAILBOX)] >= 1


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("4.7.25 Client host rejected: cannot find your hostname, [127.0.0.1]", True),
        ("4.7.1 Client host rejected: cannot find your reverse hostname, [127.0.0.1]", True),
        ("4.7.1 <localhost>: Helo command rejected: Host not found", True),
        ("4.2.0 <a@x.example>: Recipient address rejected: Greylisted, see http://postgrey.example/", False),
        ("4.7.1 Recipient address rejected: blocked by policy", False),
    ],
)
def test_a_4xx_refusal_naming_our_client_counts_against_the_egress_unlike_greylisting(text: str, counts: bool) -> None:
    session = Session("127.0.0.2", answers={"a@x.example": Reply(450, text)})
    assert is_reputation_refusal(session) is counts


def test_a_blocked_egress_is_rested_and_its_work_carried_by_another(
    admin_client_: Client, zone: DnsServer, farm: MxFarm, settings: Any, metrics_on: None
) -> None:
    settings.VERIFIER_SMTP_EGRESS = TWO
    farm.blocked_sources.add(A)
    for round_ in range(30):  # until A has had the 20 sessions its share is judged on
        domains = domains_on(zone, MAILBOX, 12, f"rest{round_}")
        verdicts = deep_verify_many([f"alice@{d}" for d in domains], seconds=30)
        assert "smtp_blocked" not in {v.sub_status for v in verdicts}  # judged through B
        if {h.name: h.resting for h in egress_health_all()}[f"bind:{A}"]:
            break
    health = {h.name: h for h in egress_health_all()}
    assert health[f"bind:{A}"].resting and not health[f"bind:{B}"].resting
    farm.reset()
    domains = domains_on(zone, MAILBOX, 12, "rested")
    assert {v.status for v in deep_verify_many([f"alice@{d}" for d in domains], seconds=30)} == {"valid"}
    assert farm.stats.by_source[(A, MAILBOX)] == 0 and farm.stats.by_source[(B, MAILBOX)] == 12
    metrics = scrape()
    assert ("verifier_smtp_egress_healthy", frozenset({("egress", f"bind:{A}")})) in metrics
    assert value(metrics, "verifier_smtp_egress_healthy", egress=f"bind:{A}") == 0
    assert value(metrics, "verifier_smtp_egress_healthy", egress=f"bind:{B}") == 1
    page = admin_client_.get("/admin/dashboard/").content.decode()
    assert f"bind:{A}</th>" in page and "resting until" in page


def test_when_every_egress_rests_deep_rows_are_smtp_blocked_at_once_without_a_session(
    db: None, zone: DnsServer, farm: MxFarm, settings: Any
) -> None:
    settings.VERIFIER_SMTP_EGRESS = f"bind:{A}"
    settings.VERIFIER_SMTP_EGRESS_BLOCKED_SHARE = 0.0
    farm.blocked_sources.add(A)
    domains = domains_on(zone, MAILBOX, 20, "allrest")
    deep_verify_many([f"alice@{d}" for d in domains], seconds=30)  # 20 sessions, every one refused
    farm.reset()
    started = time.monotonic()
    verdicts = deep_verify_many(["alice@mailbox.deepfarm.net"], seconds=30)
    assert [(v.status, v.sub_status) for v in verdicts] == [("unknown", "smtp_blocked")]
    assert sum(farm.stats.sessions.values()) == 0 and time.monotonic() - started < 1


def test_two_machines_behind_one_egress_never_exceed_the_cap_at_an_mx_address(
    zone: DnsServer, farm: MxFarm, tmp_path: Path, shared_redis: redis.Redis
) -> None:
    """Two processes, each with its own lock directory (two machines), one source address: the MX
    sees at most 3 at once because the leases are counted in Redis."""
    domains = domains_on(zone, SLOW, 24, "machines")
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.prober_run",
                zone.address,
                str(farm.port),
                str(tmp_path / f"m{i}"),
                "--redis",
                REDIS_URL,
                "--egress",
                f"bind:{A}",
                *domains[i::2],
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    answers: dict[str, str] = {}
    for run in runs:
        out, _ = run.communicate(timeout=60)
        answers.update(json.loads(out))
    assert set(answers.values()) == {"accepted"} and len(answers) == 24
    assert farm.stats.by_source[(A, SLOW)] == 24
    assert farm.stats.peak_by_source[(A, SLOW)] == 3  # up to the cap, never past it


def test_a_dead_processes_leases_free_within_seconds(shared_redis: redis.Redis) -> None:
    egress = own_egress()
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.support.lease_hold", REDIS_URL, SLOW, egress, "3", "1.0"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert shared_redis.zcard(lease_key(SLOW, egress)) == 3
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait(timeout=10)

    async def take() -> float:
        started = time.monotonic()
        leases = RedisLeases(REDIS_URL, 3, ttl=1.0)
        async with asyncio.timeout(10), leases.held(SLOW, egress):
            waited = time.monotonic() - started
        await leases.close()
        return waited

    assert asyncio.run(take()) <= 2.0  # the lease's 1 s life, and no more than a poll or two


def test_a_held_lease_outlives_its_ttl_while_its_process_renews_it(shared_redis: redis.Redis) -> None:
    egress = own_egress()

    async def hold_and_count() -> int:
        leases, other = RedisLeases(REDIS_URL, 1, ttl=1.0), RedisLeases(REDIS_URL, 1, ttl=1.0)
        try:
            async with leases.held(SLOW, egress):
                [(_, first_expiry)] = shared_redis.zrange(lease_key(SLOW, egress), 0, -1, withscores=True)

                async def two_lifetimes_on() -> bool:  # on Redis's clock, the one leases expire by
                    seconds, microseconds = shared_redis.time()
                    return seconds + microseconds / 1e6 > first_expiry + 1.0

                await wait_until_async(two_lifetimes_on, "two of the lease's lifetimes", 10)  # renewed, still ours?
                try:
                    async with asyncio.timeout(0.3), other.held(SLOW, egress):
                        return 2
                except TimeoutError:
                    return 1
        finally:
            await other.close()
            await leases.close()

    assert asyncio.run(hold_and_count()) == 1


def test_a_mistyped_egress_stops_the_start_naming_it() -> None:
    env = {**os.environ, "VERIFIER_SMTP_EGRESS": "bind:127.0.0.50,sock5://proxy:1080"}
    run = subprocess.run(
        [sys.executable, "manage.py", "check"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode != 0
    assert "ImproperlyConfigured: VERIFIER_SMTP_EGRESS: 'sock5://proxy:1080'" in run.stderr


def manage_check(**env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "DEBUG": "0", "VERIFIER_DEEP_MODE": "1", **env}
    return subprocess.run(
        [sys.executable, "manage.py", "check"], env=environment, capture_output=True, text=True, timeout=60, check=False
    )


def test_localhost_as_the_helo_name_stops_a_production_start_with_one_line_naming_the_setting() -> None:
    run = manage_check(VERIFIER_SMTP_HELO="localhost")
    assert run.returncode != 0
    assert run.stderr.count("\n") == 1 and run.stderr.startswith(
        "ImproperlyConfigured: VERIFIER_SMTP_HELO: 'localhost'"
    )


def test_an_egresses_own_ehlo_name_that_is_a_bare_label_stops_the_start_naming_the_setting() -> None:
    run = manage_check(VERIFIER_SMTP_HELO="verifier.example.com", VERIFIER_SMTP_EGRESS=f"bind:{A}|helo=mx1")
    assert run.returncode != 0
    assert run.stderr.startswith(f"ImproperlyConfigured: VERIFIER_SMTP_HELO: 'mx1', the EHLO name of egress bind:{A}")


def test_a_fully_qualified_helo_name_starts() -> None:
    run = manage_check(VERIFIER_SMTP_HELO="mx1.verifier.example.com")
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize(
    ("name", "fqdn"),
    [
        ("localhost", False),
        ("mx1", False),
        ("192.0.2.10", False),
        ("[2001:db8::1]", False),
        ("host.localdomain", False),
        ("mail.local", False),
        ("mail.example.123", False),
        ("mx1.example.com", True),
        ("mx1.example.com.", True),
        ("mx.xn--bcher-kva.de", True),
    ],
)
def test_a_helo_name_is_fully_qualified_only_when_a_mail_server_could_look_it_up(name: str, fqdn: bool) -> None:
    assert (helo_problem(name) is None) is fqdn


def test_hundreds_of_sessions_at_once_take_turns_on_a_few_redis_connections(shared_redis: redis.Redis) -> None:
    egress = own_egress()

    async def many() -> None:
        leases = RedisLeases(REDIS_URL, 3, ttl=2.0)

        async def session(n: int) -> None:
            async with leases.held(f"127.0.3.{n % 200 + 1}", egress):
                await asyncio.sleep(0.02)  # not a wait: a session's work while it holds the lease

        await asyncio.gather(*(session(n) for n in range(600)))
        await leases.close()

    asyncio.run(many())  # no "Too many connections"
    assert not shared_redis.keys(f"verifier:smtp-lease:{egress}|*")  # every lease given back
