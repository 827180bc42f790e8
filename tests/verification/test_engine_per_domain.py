"""A chunk's rows share few domains: what depends on the domain alone is worked out once per domain
(and kept for the next chunks while its answer says the same), against the loopback DNS server,
counted by the counters the engine already keeps (the DNS server's query count, the rule memos'
cache statistics)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import partial

import pytest

from tests.support.dns_server import MX, DnsServer
from tests.support.domain_cache import DictCache
from verification.engine import (
    BatchResolver,
    ResolverConfig,
    Status,
    SubStatus,
    Verdict,
    lookup_domains,
    providers,
    verify_many,
)
from verification.engine import disposable as throwaway
from verification.engine.dns import DomainAnswer, DomainStatus
from verification.engine.verdict import domain_half, judged, plain_checks, rules_forget

DOMAINS = ("alpha-co.com", "beta-co.com", "gamma-co.com", "delta-co.com")
# 60 rows over 4 domains, with role addresses, a typo and an unreadable row among them.
ROWS = [f"person{n}@{DOMAINS[n % 4]}" for n in range(56)] + [
    "info@alpha-co.com",
    "sales@beta-co.com",
    "x@gmial.com",
    "no-at-sign",
]


@pytest.fixture
def server() -> Iterator[DnsServer]:
    zone = {domain: MX(f"mx.{domain}") for domain in DOMAINS} | {"gmial.com": MX("mx.gmial.com")}
    with DnsServer(zone=zone) as dns:
        yield dns


def _judge_twice_uncached(server: DnsServer) -> list[list[Verdict]]:
    """The rows judged as two chunks, with no domain cache (each chunk goes to DNS), from cold memos."""
    rules_forget()
    resolver = BatchResolver(ResolverConfig(nameservers=(server.address,), timeout=1, lifetime=2))
    chunks = []
    for _ in range(2):
        lookup = partial(lookup_domains, cache=DictCache(), resolver=resolver)
        chunks.append(verify_many(ROWS, lookup))
    return chunks


def test_each_chunk_asks_dns_once_per_domain(server: DnsServer) -> None:
    _judge_twice_uncached(server)
    assert server.queries == 2 * 5  # four company domains and gmial.com, in each of two chunks


def test_a_domain_is_judged_once_however_many_rows_and_chunks_it_has(server: DnsServer) -> None:
    _judge_twice_uncached(server)
    # Five domains with mail (the unreadable row's empty domain is never checked), in the first chunk alone.
    checked = throwaway.is_disposable.cache_info()
    assert checked.hits + checked.misses == 5
    named = providers.mail_provider.cache_info()
    assert named.hits + named.misses == 5


def test_a_domain_whose_answer_changed_is_judged_again(server: DnsServer) -> None:
    _judge_twice_uncached(server)
    server.set("alpha-co.com", MX("mail.mailinator.com"))
    resolver = BatchResolver(ResolverConfig(nameservers=(server.address,), timeout=1, lifetime=2))
    verdicts = verify_many(ROWS, partial(lookup_domains, cache=DictCache(), resolver=resolver))
    assert {v.sub_status for v in verdicts if v.email.endswith("@alpha-co.com")} == {SubStatus.DISPOSABLE}
    assert throwaway.is_disposable.cache_info().misses == 6


def test_rows_of_one_domain_still_get_their_own_verdicts(server: DnsServer) -> None:
    first, second = _judge_twice_uncached(server)
    assert [verdict.email for verdict in first] == ROWS
    assert {verdict.status for verdict in first[:56]} == {Status.VALID}
    assert [(v.sub_status, v.did_you_mean) for v in first[56:]] == [
        (SubStatus.ROLE_BASED, None),
        (SubStatus.ROLE_BASED, None),
        (SubStatus.DISPOSABLE, "x@gmail.com"),  # gmial.com is on the throwaway list, and a typo of gmail.com
        (SubStatus.INVALID_SYNTAX, None),
    ]
    assert first == second


def test_a_verdict_joined_from_its_domain_half_is_the_one_built_field_by_field() -> None:
    answer = DomainAnswer("gmial.com", DomainStatus.MX, 60, ("mx.gmial.com",))
    joined = judged("info@gmial.com", "info", domain_half("gmial.com", True, answer))
    assert joined == Verdict(
        email="info@gmial.com",
        is_valid=False,
        status=Status.RISKY,
        sub_status=SubStatus.DISPOSABLE,
        confidence="high",
        score=10,
        checks=plain_checks(True, True, True, True, True, False),
        did_you_mean="info@gmail.com",
    )
    assert joined.to_dict()["validation_mode"] == "fast"
    assert hash(joined) == hash(replace(joined))
