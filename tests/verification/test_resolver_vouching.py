"""A bulk chunk's DNS batch asks the canary names after its own domains: a canary's answer vouches
only for the negative answers that arrived before it. A domain whose first try went unanswered is
answered by its retry after the canaries, and the resolver may have broken in between."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.dns_server import MX, NXDOMAIN, SILENT, Behaviour, DnsServer
from verification.engine import DomainStatus
from verification.resolver import TrustedResolver, answers_withheld, resolver_config

LATE = "late-answer.example"
LAST_CANARY = "yahoo.com"  # VERIFIER_DNS_CANARIES' last: the batch asks it last


@pytest.fixture
def slow_first_try(settings: Any, dns_server: DnsServer, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """LATE's first query goes unanswered and its retry gets NXDOMAIN; returns the names asked."""
    settings.VERIFIER_DNS_TIMEOUT, settings.VERIFIER_DNS_LIFETIME = 0.3, 2.0  # room for a retry
    asked: list[str] = []

    def behaviour(name: str) -> Behaviour:
        asked.append(name)
        return SILENT if asked.count(LATE) == 1 else NXDOMAIN

    monkeypatch.setattr(dns_server, "default", behaviour)
    return asked


def resolved(domain: str) -> tuple[DomainStatus, list[str]]:
    with answers_withheld() as withheld:
        answers = TrustedResolver(resolver_config(), strict=True).resolve([domain])
    return answers[domain].status, withheld


def test_a_retry_answered_after_the_canaries_as_the_resolver_breaks_is_withheld(
    db: None, dns_server: DnsServer, slow_first_try: list[str]
) -> None:
    def breaks_after_answering(name: str) -> Behaviour:
        if name == LAST_CANARY:
            dns_server.everything = NXDOMAIN  # every query after this one is a lie
            return MX("mta5.am0.yahoodns.net")
        return slow_first_try_behaviour(name)

    slow_first_try_behaviour = dns_server.default
    dns_server.zone.pop(LAST_CANARY)  # asked of `default`, which breaks the server as it answers
    dns_server.default = breaks_after_answering
    status, withheld = resolved(LATE)
    assert slow_first_try.count(LATE) == 1 and dns_server.everything is NXDOMAIN  # the retry met the broken server
    assert (status, withheld) == (DomainStatus.FAILURE, [LATE])


def test_a_retry_answered_after_the_canaries_is_believed_once_the_resolver_is_found_healthy(
    db: None, dns_server: DnsServer, slow_first_try: list[str]
) -> None:
    asked = dns_server.queries
    status, withheld = resolved(LATE)
    assert (status, withheld) == (DomainStatus.NXDOMAIN, [])
    # The first try, its retry, and once more in a batch of its own with the canaries, after a full
    # check (three canaries) found the resolver healthy.
    assert slow_first_try.count(LATE) == 3
    assert dns_server.queries - asked >= 3 + 3 + 3 + 2


def test_an_nxdomain_answered_before_the_canaries_is_believed_at_once(db: None, dns_server: DnsServer) -> None:
    asked = dns_server.queries
    assert resolved("nowhere-at-all.example") == (DomainStatus.NXDOMAIN, [])
    assert dns_server.queries - asked == 4  # the domain and the three canaries: no check of its own


def test_a_negative_answer_over_tcp_after_the_canaries_is_believed_once_two_checks_find_it_working(
    db: None, dns_server: DnsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its truncated reply sends it over TCP once the batch's UDP answers are in, so it comes after the
    canaries every time: withheld, its bulk chunk would be put back and run again for ever."""
    hosts = [f"mx-{'x' * 40}.host{i:02d}.net" for i in range(40)]  # too big for UDP: truncated
    asked: list[str] = []

    def behaviour(name: str) -> Behaviour:
        asked.append(name)
        return MX(*hosts) if asked.count(name) % 2 else NXDOMAIN  # over UDP (truncated), then over TCP

    monkeypatch.setattr(dns_server, "default", behaviour)
    assert resolved("shrinking.example") == (DomainStatus.NXDOMAIN, [])
    assert asked.count("shrinking.example") == 4  # a batch, and once more with the canaries: each UDP, then TCP
