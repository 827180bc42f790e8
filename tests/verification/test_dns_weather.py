"""README, DNS: lost packets and rate-capped resolvers do not make `unknown`s."""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Mapping
from typing import Any

import pytest

from tests.support.dns_server import MX, SILENT, DnsServer
from verification.engine import BatchResolver, DomainAnswer, DomainStatus, ResolverConfig, verify_many
from verification.engine.core import with_second_chance
from verification.engine.pacing import Pacer
from verification.resolver import domain_lookup, resolver_config


@pytest.fixture
def weather() -> Iterator[DnsServer]:
    """A server where every name has an MX, for weather to be set on."""
    with DnsServer(default=lambda name: MX(f"mx.{name}")) as server:
        yield server


def unknown_share(server: DnsServer, domains: int, **config: Any) -> float:
    resolver = BatchResolver(ResolverConfig(nameservers=(server.address,), **config))
    answers = resolver.resolve([f"d{i}.example-weather.com" for i in range(domains)])
    return sum(a.status is DomainStatus.FAILURE for a in answers.values()) / domains


def test_two_percent_packet_loss_leaves_at_most_a_thousandth_unknown(weather: DnsServer) -> None:
    weather.loss = 0.02
    # The production ratio (lifetime three timeouts) at 1 s: a lost query is asked again after the
    # retry timeout learnt from round trips, so an idle machine never waits it; a loaded one, whose
    # answers come late, has room. Without asking again, 2% would stay unknown whatever the timeout.
    assert unknown_share(weather, 3000, timeout=1.0, lifetime=3.0) <= 0.001
    assert weather.dropped >= 20  # the weather was real


def test_a_resolver_capped_at_1000_answers_a_second_leaves_at_most_a_thousandth_unknown(weather: DnsServer) -> None:
    weather.max_qps = 1000
    started = time.monotonic()
    assert unknown_share(weather, 2000, timeout=1.0, lifetime=3.0) <= 0.001
    assert time.monotonic() - started >= 1.5  # as long as the cap requires
    assert weather.dropped > 0


def test_a_lost_query_is_asked_again_of_the_same_nameserver(weather: DnsServer) -> None:
    weather.loss = 0.5
    assert unknown_share(weather, 40, timeout=0.1, lifetime=2.0) == 0
    assert weather.dropped >= 10  # each dropped query was asked again, the same server


def test_the_client_keeps_under_its_max_qps_ceiling(weather: DnsServer) -> None:
    started = time.monotonic()
    assert unknown_share(weather, 150, timeout=1, lifetime=3, max_qps=300) == 0
    assert time.monotonic() - started >= 0.4  # 150 queries at 300 a second, less one burst


def test_the_pace_backs_off_when_answers_go_missing_and_grows_when_they_keep_up() -> None:
    pacer = Pacer(timeout=1.0, rate=4000, refilled=0.0, period_start=0.0)
    pacer.on_answer(0.001, 0.001)  # a round trip of 1 ms: retry timeout MIN_RTO
    sent = send_at_pace(pacer, 0.0, 0.1)
    for i, sent_at in enumerate(sent):  # nine tries in ten unanswered
        pacer.on_answer(sent_at + 0.001, 0.001) if i % 10 == 0 else pacer.on_loss(sent_at + 0.2, sent_at)
    pacer.on_answer(0.6, 0.001)
    assert pacer.rate <= 2000 and pacer.congested  # halved at least, down to what was answered
    slowed = pacer.rate
    now = 0.6
    while now < 1.6:  # now every try is answered, 1 ms later
        now += 0.0001
        while pacer.may_send(now):
            pacer.on_answer(now + 0.001, 0.001)
    assert pacer.rate > slowed


def test_a_few_random_losses_do_not_slow_the_pace() -> None:
    pacer = Pacer(timeout=1.0, rate=4000, refilled=0.0, period_start=0.0)
    for i, sent_at in enumerate(send_at_pace(pacer, 0.0, 1.0)):  # one try in 50 lost
        pacer.on_loss(sent_at + 0.2, sent_at) if i % 50 == 0 else pacer.on_answer(sent_at + 0.001, 0.001)
    assert pacer.rate > 4000 and not pacer.congested


def send_at_pace(pacer: Pacer, now: float, seconds: float) -> list[float]:
    """A sender with more to send than the pace allows, for `seconds`: when each try went."""
    sent, end = [], now + seconds
    while now < end:
        now += 0.0001
        while pacer.may_send(now):
            sent.append(now)
    return sent


def test_max_qps_setting_reaches_the_resolver_and_lifetime_is_three_timeouts(settings: Any) -> None:
    assert resolver_config().max_qps is None
    settings.VERIFIER_DNS_MAX_QPS = 500.0
    assert resolver_config().max_qps == 500.0
    assert ResolverConfig().lifetime == 3 * ResolverConfig().timeout


def test_a_second_chance_asks_failed_domains_once_more(dns_server: DnsServer, db: None) -> None:
    dns_server.set("later.com", SILENT)
    lookup = domain_lookup()

    def lookup_then_weather_clears(domains: Collection[str], /, **_: object) -> Mapping[str, DomainAnswer]:
        answers = lookup(domains)
        dns_server.set("later.com", MX("mx.later.com"))
        return answers

    assert verify_many(["jane@later.com"], lookup_then_weather_clears)[0].status == "unknown"
    dns_server.set("later.com", SILENT)
    assert verify_many(["jane@later.com"], with_second_chance(lookup_then_weather_clears))[0].status == "valid"
