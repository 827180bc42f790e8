"""How a deep batch's recipients are grouped into sessions against the MX farm: by MX *address*,
so MX host names that differ but resolve to one address (a host name per Microsoft 365 tenant)
share sessions, and each address gets the sessions its recipients need, a domain's recipients
kept together in one of them."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.deep import MAILBOX, tenants
from tests.support.dns_server import DnsServer
from tests.support.mx_farm import MxFarm
from verification.engine.dns import ResolverConfig
from verification.engine.mxhosts import host_resolver
from verification.engine.smtp import SmtpConfig
from verification.engine.smtp_answers import OUT_OF_TIME
from verification.engine.smtp_replies import PROBE_SPARED, Meaning
from verification.engine.smtp_scheduling import Prober, _Feed, run_streamed, sessions_needed
from verification.engine.smtp_slots import HostSlots


@pytest.fixture
def zone(deep_farm: MxFarm, _resolver_on_loopback: DnsServer) -> DnsServer:
    return _resolver_on_loopback


def prober(dns: DnsServer, farm: MxFarm, lock_dir: Path) -> Prober:
    return Prober(
        config=SmtpConfig(helo="verifier.deep-sender.net", mail_from="v@deep-sender.net", port=farm.port),
        resolve=host_resolver(ResolverConfig(nameservers=(dns.address,), timeout=0.5, lifetime=1.0)),
        allowed=lambda address: True,
        slots=HostSlots(lock_dir, 3),
    )


def test_domains_whose_mx_names_differ_but_share_an_address_share_its_sessions(
    zone: DnsServer, farm: MxFarm, tmp_path: Path
) -> None:
    domains = tenants(zone, 8)
    work = {(f"{d.replace('.', '-')}.mail.protection.deepfarm.net",): [f"alice@{d}", f"bob@{d}"] for d in domains}
    findings = asyncio.run(prober(zone, farm, tmp_path).ask(work, timeout=30))
    assert {findings.answers[f"alice@{d}"].meaning for d in domains} == {Meaning.ACCEPTED}
    assert {findings.answers[f"bob@{d}"].meaning for d in domains} == {Meaning.NO_MAILBOX}
    assert farm.stats.sessions[MAILBOX] == 2 == sessions_needed(16, 3)  # 16 recipients: two sessions, not eight


def test_an_address_gets_the_sessions_its_recipients_need_and_no_more(
    zone: DnsServer, farm: MxFarm, tmp_path: Path
) -> None:
    domains = tenants(zone, 30)
    work = {(f"{d.replace('.', '-')}.mail.protection.deepfarm.net",): [f"alice@{d}", f"bob@{d}"] for d in domains}
    findings = asyncio.run(prober(zone, farm, tmp_path).ask(work, timeout=30))
    assert len(findings.answers) == 60
    assert farm.stats.sessions[MAILBOX] == 3 == sessions_needed(60, 3)  # 60 recipients, 3 sessions at once
    assert farm.stats.peak[MAILBOX] == 3


def test_a_domains_addresses_and_its_probe_share_a_session_so_its_replies_can_spare_the_probe(
    zone: DnsServer, farm: MxFarm, tmp_path: Path
) -> None:
    """Dealt a domain at a time, not one recipient to each session in turn: bob's refusal as unknown
    is read in the session that would send the probe, which therefore is not sent."""
    domains = tenants(zone, 30)
    work = {
        (f"{d.replace('.', '-')}.mail.protection.deepfarm.net",): [f"alice@{d}", f"bob@{d}", f"probe@{d}"]
        for d in domains
    }
    asking = prober(zone, farm, tmp_path)
    asking.config = replace(asking.config, probes=frozenset(f"probe@{d}" for d in domains))
    findings = asyncio.run(asking.ask(work, timeout=30))
    assert {findings.answers[f"probe@{d}"].reply for d in domains} == {PROBE_SPARED}
    assert farm.stats.sessions[MAILBOX] == 3 and farm.stats.commands["RCPT"] == 60  # alice and bob of each


def test_a_share_of_a_feed_ends_with_the_domain_it_would_cut_when_that_is_at_most_a_quarter_more() -> None:
    """A batch in parts (smtp_scheduling.py): a session's share is a fair one, a domain kept whole where
    that costs little, so its probe follows its addresses' replies; a large domain is still dealt."""
    feed = _Feed(("mx.example",), ("192.0.2.1",))
    feed.push([f"{local}@x.example" for local in "abcd"] + ["e@y.example", "f@y.example"] + ["g@z.example"] * 5)
    assert feed.cut(3) == [f"{local}@x.example" for local in "abcd"]  # 4 of 11, a domain at a time
    assert feed.cut(2) == ["e@y.example", "f@y.example", "g@z.example", "g@z.example"]  # 4: z's end is 3 further
    assert feed.cut(1) == ["g@z.example"] * 3 and feed.pending == []
    large = [f"user{i}@big.example" for i in range(12)]
    feed.push(large)
    assert feed.cut(3) == large[:4]
    assert feed.seen == 23


def test_parts_planned_after_the_deadline_are_answered_out_of_time(
    zone: DnsServer, farm: MxFarm, tmp_path: Path
) -> None:
    """A batch in parts whose time is out before its planning is: every recipient has an answer, those
    of the parts that came too late the batch's own (asked again later), none missing."""
    domains = tenants(zone, 3)
    parts = ({(f"{d.replace('.', '-')}.mail.protection.deepfarm.net",): [f"alice@{d}"]} for d in domains)
    findings = run_streamed(prober(zone, farm, tmp_path), parts, 0.0, OUT_OF_TIME)
    assert findings.answers == {f"alice@{domain}": OUT_OF_TIME for domain in domains}
