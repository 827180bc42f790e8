"""The egresses' self-checks against the loopback DNS server (docs/deep.md, "Running deep mode on
the internet"): each egress's EHLO name and address must name each other (forward-confirmed reverse
DNS), else it is shown `misconfigured`; an egress a DNSBL zone lists rests until delisted, and its
rows go through the other egress."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.core.cache import cache
from django.test import Client

from tests.support.deep import domains_on
from tests.support.dns_server import HOST, PTR, SILENT, DnsServer
from tests.support.metrics import scrape, value
from tests.support.mx_farm import MxFarm
from verification import egress_checks, queue
from verification.deep import deep_verify_many
from verification.egress_checks import egress_key, zone_shown
from verification.egresses import EgressHealth, egress_health_all, egress_self_checks_run, egresses_healthy
from verification.engine.egress_dns import blocklist_name

A, B = "127.0.0.50", "127.0.0.51"
TWO = f"bind:{A}|helo=a.deep-sender.net,bind:{B}|helo=b.deep-sender.net"
MAILBOX = "127.0.0.2"  # alice exists
ZONE = "dnsbl.loopback.test"
INTERVAL = 900


@pytest.fixture
def egresses(db: None, settings: Any, _resolver_on_loopback: DnsServer) -> Iterator[DnsServer]:
    """Two bound egresses whose names and addresses confirm each other, nothing listed; no finding
    left from another test (with REDIS_URL the shared cache outlives a test's transaction)."""
    settings.VERIFIER_DEEP_MODE = True
    settings.VERIFIER_SMTP_EGRESS = TWO
    settings.VERIFIER_SMTP_DNSBL_ZONES = [ZONE]
    settings.VERIFIER_SMTP_DNSBL_INTERVAL_SECONDS = INTERVAL
    dns = _resolver_on_loopback
    for letter, address in (("a", A), ("b", B)):
        dns.set(f"{letter}.deep-sender.net", HOST(address))
        dns.set(_reverse(address), PTR(f"{letter}.deep-sender.net"))
    egress_checks.forget()  # as a fresh process
    kinds = ("egress-identity", "egress-dnsbl", "egress-rest")
    cache.delete_many([egress_key(kind, f"bind:{address}") for kind in kinds for address in (A, B)])
    yield dns


def _reverse(address: str) -> str:
    return ".".join(reversed(address.split("."))) + ".in-addr.arpa"


def health(name: str) -> EgressHealth:
    return {h.name: h for h in egress_health_all()}[name]


def test_an_egress_whose_helo_name_and_ptr_name_each_other_is_confirmed(egresses: DnsServer) -> None:
    egress_self_checks_run()
    found = health(f"bind:{A}")
    assert found.identity is not None and found.identity.state == "confirmed" and found.healthy


def test_a_helo_name_without_the_egress_address_is_misconfigured_on_the_dashboard_readyz_and_metrics(
    egresses: DnsServer, admin_client_: Client, metrics_on: None
) -> None:
    egresses.set("a.deep-sender.net", HOST("192.0.2.10"))
    egress_self_checks_run()
    reason = f"HELO a.deep-sender.net has no address {A}"
    assert f"misconfigured: {reason}" in admin_client_.get("/admin/dashboard/").content.decode()
    assert Client().get("/readyz").json()["egresses"] == {f"bind:{A}": f"misconfigured: {reason}", f"bind:{B}": "ok"}
    metrics = scrape()
    assert value(metrics, "verifier_smtp_egress_healthy", egress=f"bind:{A}") == 0
    assert value(metrics, "verifier_smtp_egress_healthy", egress=f"bind:{B}") == 1


def test_a_misconfigured_egress_is_shown_but_still_carries_sessions(egresses: DnsServer) -> None:
    egresses.set(_reverse(A), PTR("other.example.net"))
    egress_self_checks_run()
    assert health(f"bind:{A}").misconfigured
    assert [egress.name for egress in egresses_healthy()] == [f"bind:{A}", f"bind:{B}"]


def test_a_ptr_naming_another_host_is_misconfigured_in_words(egresses: DnsServer) -> None:
    egresses.set(_reverse(A), PTR("other.example.net"))
    egress_self_checks_run()
    assert health(f"bind:{A}").describe() == f"misconfigured: {A}'s PTR names other.example.net"


def test_an_address_without_a_ptr_record_is_misconfigured_in_words(egresses: DnsServer) -> None:
    del egresses.zone[_reverse(A)]
    egress_self_checks_run()
    assert health(f"bind:{A}").describe() == f"misconfigured: {A} has no PTR record"


def test_a_socks5_egress_without_its_address_is_unchecked_in_words(egresses: DnsServer, settings: Any) -> None:
    settings.VERIFIER_SMTP_EGRESS = "socks5://127.0.0.1:1080|helo=p.deep-sender.net"
    egress_self_checks_run()
    said = health("socks5://127.0.0.1:1080").describe()
    assert said == "unchecked: the address mail servers see is not known here: give it with |address="


def test_the_machines_own_address_is_unchecked_saying_how_to_name_it(egresses: DnsServer, settings: Any) -> None:
    settings.VERIFIER_SMTP_EGRESS = ""
    asked = egresses.queries
    egress_self_checks_run()
    assert health("direct").describe().startswith("unchecked: the address mail servers see is not known here: list")
    assert egresses.queries == asked


def test_a_socks5_egress_with_its_address_given_is_checked(egresses: DnsServer, settings: Any) -> None:
    settings.VERIFIER_SMTP_EGRESS = f"socks5://127.0.0.1:1080|helo=b.deep-sender.net|address={B}"
    egress_self_checks_run()
    assert health("socks5://127.0.0.1:1080").describe() == "ok"


def test_the_identity_is_checked_again_after_an_hour(egresses: DnsServer) -> None:
    egress_self_checks_run()
    egresses.set(_reverse(A), PTR("other.example.net"))
    with time_machine.travel(timedelta(minutes=59), tick=True):
        egress_self_checks_run()
        assert not health(f"bind:{A}").misconfigured
    with time_machine.travel(timedelta(minutes=61), tick=True):
        egress_self_checks_run()
        assert health(f"bind:{A}").misconfigured


def test_a_new_process_checks_the_identity_at_its_first_run_whatever_an_earlier_one_found(egresses: DnsServer) -> None:
    egress_self_checks_run()
    egresses.set(_reverse(A), PTR("other.example.net"))
    egress_self_checks_run()
    assert not health(f"bind:{A}").misconfigured  # the hour has not passed
    egress_checks.forget()  # a restarted qcluster's worker
    egress_self_checks_run()
    assert health(f"bind:{A}").misconfigured


def test_an_identity_check_dns_does_not_answer_keeps_the_previous_finding(egresses: DnsServer) -> None:
    egress_self_checks_run()
    egresses.set("a.deep-sender.net", SILENT)
    with time_machine.travel(timedelta(hours=2), tick=True):
        egress_self_checks_run()
        assert health(f"bind:{A}").describe() == "ok"


def test_a_listed_egress_rests_within_one_check_interval_and_its_rows_go_through_the_other(
    egresses: DnsServer, deep_farm: MxFarm
) -> None:
    egress_self_checks_run()  # nothing listed
    egresses.set(blocklist_name(A, ZONE), HOST("127.0.0.2"))
    with time_machine.travel(timedelta(seconds=INTERVAL), tick=True):
        egress_self_checks_run()
    listed = health(f"bind:{A}")
    assert listed.resting and [zone.zone for zone in listed.listed] == [ZONE]
    assert not health(f"bind:{B}").resting
    domains = domains_on(egresses, MAILBOX, 12, "dnsbl-listed")
    assert {v.status for v in deep_verify_many([f"alice@{d}" for d in domains], seconds=30)} == {"valid"}
    assert deep_farm.stats.by_source[(A, MAILBOX)] == 0 and deep_farm.stats.by_source[(B, MAILBOX)] == 12

    del egresses.zone[blocklist_name(A, ZONE)]  # delisted: NXDOMAIN
    with time_machine.travel(timedelta(seconds=2 * INTERVAL), tick=True):
        egress_self_checks_run()
    assert not health(f"bind:{A}").resting
    deep_farm.reset()
    domains = domains_on(egresses, MAILBOX, 12, "dnsbl-delisted")
    assert {v.status for v in deep_verify_many([f"alice@{d}" for d in domains], seconds=30)} == {"valid"}
    assert deep_farm.stats.by_source[(A, MAILBOX)] == deep_farm.stats.by_source[(B, MAILBOX)] == 6


def test_a_blocklist_is_not_asked_again_before_its_interval(egresses: DnsServer) -> None:
    egress_self_checks_run()
    egresses.set(blocklist_name(A, ZONE), HOST("127.0.0.2"))
    with time_machine.travel(timedelta(seconds=INTERVAL - 60), tick=True):
        egress_self_checks_run()
        assert not health(f"bind:{A}").resting


def test_the_dashboard_and_metrics_name_the_listing_zone_and_when_it_was_found(
    egresses: DnsServer, admin_client_: Client, metrics_on: None
) -> None:
    egresses.set(blocklist_name(A, ZONE), HOST("127.0.0.2"))
    found_at = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=5)  # a fixed date ages out
    with time_machine.travel(found_at, tick=False):
        egress_self_checks_run()
    page = admin_client_.get("/admin/dashboard/").content.decode()
    assert f"resting: listed on {ZONE} (127.0.0.2) since {found_at:%Y-%m-%d %H:%M}" in page
    metrics = scrape()
    assert value(metrics, "verifier_smtp_egress_listed", egress=f"bind:{A}", zone=ZONE) == 1
    assert ("verifier_smtp_egress_listed", frozenset({("egress", f"bind:{B}"), ("zone", ZONE)})) in metrics
    assert value(metrics, "verifier_smtp_egress_listed", egress=f"bind:{B}", zone=ZONE) == 0
    assert value(metrics, "verifier_smtp_egress_healthy", egress=f"bind:{A}") == 0


def test_a_zone_refusing_the_query_is_an_error_not_a_listing(egresses: DnsServer, admin_client_: Client) -> None:
    egresses.set(blocklist_name(A, ZONE), HOST("127.255.255.254"))  # Spamhaus, asked through a public resolver
    egress_self_checks_run()
    found = health(f"bind:{A}")
    assert not found.resting
    assert found.describe() == f"{ZONE} refused the query (127.255.255.254): an error, not a listing"
    assert "refused the query (127.255.255.254)" in admin_client_.get("/admin/dashboard/").content.decode()


def test_a_blocklist_that_does_not_answer_keeps_the_previous_listing(egresses: DnsServer) -> None:
    egresses.set(blocklist_name(A, ZONE), HOST("127.0.0.2"))
    egress_self_checks_run()
    egresses.set(blocklist_name(A, ZONE), SILENT)
    with time_machine.travel(timedelta(seconds=INTERVAL), tick=True):
        egress_self_checks_run()
        assert health(f"bind:{A}").resting


def test_nothing_is_asked_while_deep_mode_is_off(egresses: DnsServer, settings: Any) -> None:
    settings.VERIFIER_DEEP_MODE = False
    asked = egresses.queries
    egress_self_checks_run()
    assert egresses.queries == asked and health(f"bind:{A}").identity is None


def test_the_self_checks_run_on_a_one_minute_schedule() -> None:
    assert any(e.func == "verification.egresses.egress_self_checks_run" and e.minutes == 1 for e in queue.SCHEDULES)


@pytest.mark.parametrize(
    ("address", "name"),
    [
        ("192.0.2.10", f"10.2.0.192.{ZONE}"),
        ("2001:db8::1", "1." + "0." * 23 + f"8.b.d.0.1.0.0.2.{ZONE}"),  # 32 nibbles
    ],
)
def test_a_blocklist_is_asked_the_address_reversed_under_its_zone(address: str, name: str) -> None:
    assert blocklist_name(address, ZONE) == name


def test_a_zones_key_is_not_shown() -> None:
    assert zone_shown("abcdefghijklmnopqrstuvwxyz.zen.dq.spamhaus.net") == "<key>.zen.dq.spamhaus.net"
