"""Rate limits are not unreachability, and the pacing learns (docs/deep.md, "Rate limits"): an MX
that limits our connections (Postfix's anvil, in the farm) answers `greylisted`, never
`smtp_unreachable`; its allowance per (egress, MX address) halves and spaces sessions after a
refusal, grows back after sessions it takes, and is shared through Redis by every machine behind
an egress."""

from __future__ import annotations

import asyncio
import json
import random
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import redis
import time_machine
from django.test import Client

from tests.conftest import Persona
from tests.support.deep import ANVIL, SLOW, domains_on, prober
from tests.support.dns_server import DnsServer
from tests.support.mx_farm import MxFarm
from tests.verification.conftest import REDIS_URL, deep, verdict_of
from verification.engine.allowance import (
    FIRST_INTERVAL,
    FORGET_SECONDS,
    Allowance,
    AllowanceFile,
    Throttled,
    Turn,
    after_refusal,
)
from verification.engine.leases import RedisLeases, allowance_key
from verification.engine.smtp_answers import THROTTLED
from verification.engine.smtp_replies import Meaning
from verification.engine.smtp_scheduling import Prober


def test_a_single_verification_turned_away_for_our_rate_is_greylisted_not_unreachable(
    owner: Persona, deep_farm: MxFarm
) -> None:
    assert [verdict_of(deep(owner, f"{name}@anvil.deepfarm.net"))[0] for name in ("alice", "bob")] == ["valid"] * 2
    started = time.monotonic()
    assert verdict_of(deep(owner, "carol@anvil.deepfarm.net")) == ("unknown", "greylisted", False, None, None)
    assert time.monotonic() - started < 5  # answered at once, not after the server's minute
    assert deep_farm.stats.rate_refused[ANVIL] == 1


def test_a_refusal_halves_the_sessions_at_once_and_spaces_their_starts() -> None:
    first = after_refusal(Allowance(3.0), now=100.0, started=99.9)
    assert (first.sessions, first.interval, first.next_start) == (1, FIRST_INTERVAL, 100.0 + FIRST_INTERVAL)
    again = after_refusal(first, now=102.0, started=101.5)  # a session begun after the first refusal
    assert (again.sessions, again.interval, again.next_start) == (1, 2 * FIRST_INTERVAL, 104.0)


def test_refusals_of_sessions_begun_together_halve_the_allowance_once() -> None:
    first = after_refusal(Allowance(3.0), now=100.0, started=99.9)
    same_burst = after_refusal(first, now=100.1, started=99.95)
    assert (same_burst.limit, same_burst.interval) == (first.limit, first.interval)
    assert same_burst.next_start == pytest.approx(100.1 + FIRST_INTERVAL)


def test_the_allowance_grows_back_after_sessions_the_server_takes(tmp_path: Path) -> None:
    pace = AllowanceFile(tmp_path / "mx.allowance", 3)
    with time_machine.travel(1_000_000.0, tick=False) as traveller:
        pace.learn(Turn(time.time(), rate_limited=True), time.time())
        assert pace.sessions(time.time()) == 1
        assert pace.start(time.time()) == FIRST_INTERVAL  # the next start waits out the spacing
        seen: list[int] = []
        while len(seen) < 20:
            traveller.shift(FIRST_INTERVAL)  # the longest spacing it can hold from now on
            turn = pace.start(time.time())
            assert isinstance(turn, Turn)
            if not turn.paced:
                break
            turn.completed = True
            pace.learn(turn, time.time())
            seen.append(pace.sessions(time.time()))
    # a quarter of a session back for each taken (from 1.5), while the spacing shrinks to nothing
    assert seen == [1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3]
    assert pace.path.read_text() == ""  # the default again: nothing kept


def test_a_forgotten_address_is_back_to_the_default(tmp_path: Path) -> None:
    pace = AllowanceFile(tmp_path / "mx.allowance", 3)
    with time_machine.travel(1_000_000.0, tick=False) as traveller:
        pace.learn(Turn(time.time(), rate_limited=True), time.time())
        traveller.shift(FORGET_SECONDS)
        assert pace.sessions(time.time()) == 3
        assert isinstance(pace.start(time.time()), Turn)


def _source() -> str:
    """A loopback source address of this test's own: the allowance it learns in the shared Redis
    (kept for an hour) is nobody else's."""
    return f"127.{random.randint(100, 250)}.{random.randint(1, 250)}.{random.randint(1, 250)}"


def _prober(zone: DnsServer, farm: MxFarm, tmp_path: Path, egress: str) -> Prober:
    """The egress tests' prober, its allowance in Redis, answering at once as a single request does."""
    return replace(prober(zone, farm, tmp_path, egress=egress), slots=RedisLeases(REDIS_URL, 3), backoff_tries=0)


def test_two_machines_behind_one_egress_share_the_allowance(
    deep_farm: MxFarm, _resolver_on_loopback: DnsServer, tmp_path: Path, shared_redis: redis.Redis
) -> None:
    """A machine (a process of its own) is refused for its rate; the other, behind the same egress,
    waits out the spacing the first learnt before it knocks, and learns on from the first's
    allowance; another egress starts from the default."""
    zone, source = _resolver_on_loopback, _source()
    domains = domains_on(zone, ANVIL, 4, "anvil")
    command = [sys.executable, "-m", "tests.support.prober_run", zone.address, str(deep_farm.port), str(tmp_path)]
    first = subprocess.run(
        [*command, "--redis", REDIS_URL, "--egress", f"bind:{source}", "--once", *domains[:3]],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert sorted(json.loads(first.stdout).values()) == ["accepted", "accepted", "try_again"]
    key = allowance_key(ANVIL, f"bind:{source}")
    try:
        assert shared_redis.hget(key, "limit") == b"1.5"  # the sessions at once, halved
        asyncio.run(_prober(zone, deep_farm, tmp_path, f"bind:{source}").ask({(f"mx1.{domains[3]}",): ["a@x"]}, 30))
        connected = sorted(deep_farm.stats.connected_at[(source, ANVIL)])
        assert len(connected) == 4 and connected[3] - connected[2] >= FIRST_INTERVAL - 0.01  # spaced
        assert shared_redis.hget(key, "limit") == b"1.0"  # and refused again: halved from the other's
    finally:
        shared_redis.delete(key)
    other = _source()
    findings = asyncio.run(
        _prober(zone, deep_farm, tmp_path, f"bind:{other}").ask({(f"mx1.{domains[3]}",): ["alice@x"]}, 30)
    )
    assert findings.answers["alice@x"].meaning is Meaning.ACCEPTED


def test_a_session_spaced_past_its_deadline_is_throttled_at_once(shared_redis: redis.Redis) -> None:
    egress = f"bind:{_source()}"

    async def refused_then_again() -> float:
        leases = RedisLeases(REDIS_URL, 3)
        try:
            async with leases.held(ANVIL, egress) as turn:
                turn.rate_limited = True
            loop = asyncio.get_running_loop()
            with pytest.raises(Throttled) as throttled:
                async with leases.held(ANVIL, egress, deadline=loop.time() + 0.1):
                    pass
            return throttled.value.wait
        finally:
            await leases.close()
            shared_redis.delete(allowance_key(ANVIL, egress))

    assert 0 < asyncio.run(refused_then_again()) <= FIRST_INTERVAL


def test_the_redis_allowance_is_forgotten_an_hour_after_its_last_change(shared_redis: redis.Redis) -> None:
    egress = f"bind:{_source()}"

    async def refused() -> None:
        leases = RedisLeases(REDIS_URL, 3)
        async with leases.held(ANVIL, egress) as turn:
            turn.rate_limited = True
        await leases.close()

    asyncio.run(refused())
    try:
        assert 0 < shared_redis.pttl(allowance_key(ANVIL, egress)) <= FORGET_SECONDS * 1000
    finally:
        shared_redis.delete(allowance_key(ANVIL, egress))


def test_an_address_that_limited_our_rate_gets_one_session_for_a_group_not_three(
    deep_farm: MxFarm, _resolver_on_loopback: DnsServer, tmp_path: Path
) -> None:
    domain = domains_on(_resolver_on_loopback, SLOW, 1, "paced")[0]
    earlier = time.time() - 2 * FIRST_INTERVAL  # refused a while ago: its spacing has passed
    AllowanceFile(tmp_path / f"{SLOW}.allowance", 3).learn(Turn(earlier, rate_limited=True), earlier)
    work = {(f"mx1.{domain}", f"mx2.{domain}"): [f"alice{i}@{domain}" for i in range(24)]}
    findings = asyncio.run(prober(_resolver_on_loopback, deep_farm, tmp_path).ask(work, timeout=30))
    assert len(findings.answers) == 24
    assert deep_farm.stats.sessions[SLOW] == 1  # without the refusal: three at once (test_smtp_sessions)


def throttled_on_dashboard(admin: Client) -> dict[str, tuple[str, str]]:
    """The dashboard's MX addresses limiting our rate: address -> (sessions at once, spacing)."""
    page = admin.get("/admin/dashboard/").content.decode()
    cells = r'<td data-figure="throttled-address">([^<]*)</td><td data-figure="throttled-sessions">([^<]*)</td>'
    return {
        address: (sessions, spacing) for address, sessions, spacing in re.findall(cells + r"<td[^>]*>([^<]*)<", page)
    }


def test_staff_dashboard_lists_the_mx_addresses_limiting_our_rate(
    owner: Persona, deep_farm: MxFarm, admin_client_: Client
) -> None:
    assert ANVIL not in throttled_on_dashboard(admin_client_)
    for name in ("alice", "bob", "carol"):  # the third is refused for our rate
        deep(owner, f"{name}@anvil.deepfarm.net")
    assert throttled_on_dashboard(admin_client_)[ANVIL] == ("1", f"{FIRST_INTERVAL} s")


def test_a_session_spaced_past_the_runs_time_is_not_opened_and_asked_again_later(
    deep_farm: MxFarm, _resolver_on_loopback: DnsServer, tmp_path: Path
) -> None:
    domain = domains_on(_resolver_on_loopback, ANVIL, 1, "spaced")[0]
    pace, now = AllowanceFile(tmp_path / f"{ANVIL}.allowance", 3), time.time()
    for n in range(6):  # refused six times running: 32 s between starts
        pace.learn(Turn(now + n / 1000, rate_limited=True), now + n / 1000)
    work = {(f"mx1.{domain}", f"mx2.{domain}"): [f"alice@{domain}"]}
    findings = asyncio.run(prober(_resolver_on_loopback, deep_farm, tmp_path).ask(work, timeout=5))
    assert findings.answers[f"alice@{domain}"] == THROTTLED  # try_again: greylisted, never unreachable
    assert deep_farm.stats.sessions[ANVIL] == 0
