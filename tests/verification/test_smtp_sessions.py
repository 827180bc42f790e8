"""The scheduling of SMTP sessions against the MX farm: politeness per MX address (within a
process and across processes), 421 back-off, the SOCKS5 proxy."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Persona
from tests.support.deep import SLOW, domains_on, prober
from tests.support.dns_server import DnsServer
from tests.support.mx_farm import MxFarm
from tests.support.socks5 import Socks5Server
from verification.engine.smtp_replies import Meaning
from verification.engine.smtp_scheduling import RECIPIENTS_A_SESSION

BUSY = "127.0.0.10"  # takes one connection at a time, 421 to the others


@pytest.fixture
def zone(deep_farm: MxFarm, _resolver_on_loopback: DnsServer) -> DnsServer:
    return _resolver_on_loopback


def test_never_more_than_three_connections_to_one_address(zone: DnsServer, farm: MxFarm, tmp_path: Path) -> None:
    domains = domains_on(zone, SLOW, 12, "slow")
    work = {(f"mx1.{d}", f"mx2.{d}"): [f"alice@{d}"] for d in domains}
    findings = asyncio.run(prober(zone, farm, tmp_path).ask(work, timeout=30))
    assert {answer.meaning for answer in findings.answers.values()} == {Meaning.ACCEPTED}
    assert farm.stats.sessions[SLOW] == 12
    assert farm.stats.peak[SLOW] == 3  # concurrent up to the cap, never past it


def test_never_more_than_three_connections_across_processes(zone: DnsServer, farm: MxFarm, tmp_path: Path) -> None:
    domains = domains_on(zone, SLOW, 16, "procs")
    command = [sys.executable, "-m", "tests.support.prober_run", zone.address, str(farm.port), str(tmp_path)]
    runs = [subprocess.Popen([*command, *domains[i::2]], stdout=subprocess.PIPE, text=True) for i in range(2)]
    answers: dict[str, str] = {}
    for run in runs:
        out, _ = run.communicate(timeout=60)
        answers.update(json.loads(out))
    assert set(answers.values()) == {"accepted"} and len(answers) == 16
    assert farm.stats.peak[SLOW] <= 3


def test_421_too_many_connections_backs_off_and_asks_again(zone: DnsServer, farm: MxFarm, tmp_path: Path) -> None:
    domain = "busy.deepfarm.net"  # 45 recipients: three sessions at once, to a server that takes one
    work = {(f"mx1.{domain}",): [f"user{i}@{domain}" for i in range(45)]}
    findings = asyncio.run(prober(zone, farm, tmp_path).ask(work, timeout=30))
    assert {findings.answers[f"user{i}@{domain}"].meaning for i in range(12)} == {Meaning.ACCEPTED}
    assert {findings.answers[f"user{i}@{domain}"].meaning for i in range(12, 45)} == {Meaning.NO_MAILBOX}
    assert "backed_off" in findings.sessions  # some were turned away at first, none got a verdict from it


def test_many_recipients_of_one_domain_share_a_session(zone: DnsServer, farm: MxFarm, tmp_path: Path) -> None:
    domain = "busy.deepfarm.net"
    work = {(f"mx1.{domain}",): [f"user{i}@{domain}" for i in range(RECIPIENTS_A_SESSION)]}
    findings = asyncio.run(prober(zone, farm, tmp_path).ask(work, timeout=30))
    assert {answer.meaning for answer in findings.answers.values()} == {Meaning.ACCEPTED}
    assert farm.stats.sessions[BUSY] == 1 and farm.stats.commands["MAIL"] == 1


def test_a_large_group_is_dealt_among_three_sessions_at_once(zone: DnsServer, farm: MxFarm, tmp_path: Path) -> None:
    domain = domains_on(zone, SLOW, 1, "large")[0]
    work = {(f"mx1.{domain}",): [f"alice{i}@{domain}" for i in range(45)]}
    findings = asyncio.run(prober(zone, farm, tmp_path).ask(work, timeout=30))
    assert len(findings.answers) == 45
    assert farm.stats.sessions[SLOW] == 3 and farm.stats.peak[SLOW] == 3
    assert farm.stats.commands["RCPT"] == 45


@pytest.fixture
def socks() -> Iterator[Socks5Server]:
    with Socks5Server() as server:
        yield server


def test_every_session_goes_through_the_socks5_proxy(
    owner: Persona, zone: DnsServer, farm: MxFarm, socks: Socks5Server, settings: Any
) -> None:
    settings.VERIFIER_SMTP_PROXY = socks.url
    response = owner.post_json("/v1/verify", {"email": "alice@mailbox.deepfarm.net", "validation_mode": "deep"})
    assert response.json()["status"] == "valid"
    assert socks.destinations == [("127.0.0.2", farm.port)]  # an address, never a name


def test_a_proxy_that_refuses_leaves_the_address_unreachable(
    owner: Persona, zone: DnsServer, farm: MxFarm, settings: Any
) -> None:
    with Socks5Server() as stopped:
        url = stopped.url
    settings.VERIFIER_SMTP_PROXY = url
    response = owner.post_json("/v1/verify", {"email": "alice@mailbox.deepfarm.net", "validation_mode": "deep"})
    assert response.json()["sub_status"] == "smtp_unreachable"
    assert sum(farm.stats.sessions.values()) == 0


def test_nothing_in_the_tests_connects_beyond_loopback() -> None:
    import socket

    with socket.socket() as sock, pytest.raises(ConnectionRefusedError, match="tests stay on loopback"):
        sock.connect(("192.0.2.1", 25))
