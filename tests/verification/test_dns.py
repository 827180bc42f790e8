"""MX lookups against real DNS servers on loopback: each kind of answer, TTLs, nameservers that fail or stay
silent, many domains at once, a cache in front. An MX host's addresses: test_mx_hosts.py; the wire
format against dnspython's: test_dns_wire.py."""

from __future__ import annotations

import gc
import socket
import threading
import time
from functools import partial

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.rrset
import pytest

from tests.support.dns_server import CNAME, MX, NULL_MX, NXDOMAIN, SERVFAIL, SILENT, Behaviour, DnsServer
from tests.support.domain_cache import DictCache
from verification.engine import BatchResolver, DomainStatus, ResolverConfig, verify_many
from verification.engine.dns import lookup_domains


def resolver_for(*servers: DnsServer | str, timeout: float = 0.3, lifetime: float = 0.3) -> BatchResolver:
    addresses = tuple(s if isinstance(s, str) else s.address for s in servers)
    return BatchResolver(ResolverConfig(nameservers=addresses, timeout=timeout, lifetime=lifetime))


@pytest.fixture
def resolve(dns_server: DnsServer):
    resolver = resolver_for(dns_server)
    return lambda *domains: resolver.resolve(domains)


# --- answers --------------------------------------------------------------------------------------


def test_mx_hosts_come_back_in_preference_order(resolve) -> None:
    answer = resolve("good.com")["good.com"]
    assert answer.status is DomainStatus.MX
    assert answer.mx_hosts == ("mx1.good.com", "mx2.good.com")


@pytest.mark.parametrize(
    ("domain", "status"),
    [
        ("aonly.com", DomainStatus.NO_MX),
        ("nullmx.com", DomainStatus.NULL_MX),
        ("nowhere-at-all.com", DomainStatus.NXDOMAIN),
        ("servfail.com", DomainStatus.FAILURE),
        ("silent.com", DomainStatus.FAILURE),
    ],
)
def test_each_kind_of_answer(resolve, domain: str, status: DomainStatus) -> None:
    assert resolve(domain)[domain].status is status


def test_null_mx_beside_a_real_mx_still_counts_as_mx(resolve, dns_server: DnsServer) -> None:
    dns_server.set("mixed.com", Behaviour("mx", ((0, "."), (10, "mx.mixed.com"))))
    answer = resolve("mixed.com")["mixed.com"]
    assert (answer.status, answer.mx_hosts) == (DomainStatus.MX, ("mx.mixed.com",))


def test_a_cname_is_followed_to_the_mx_of_its_target(resolve, dns_server: DnsServer) -> None:
    dns_server.set("alias.com", CNAME("real-mail.net"))
    answer = resolve("alias.com")["alias.com"]
    assert (answer.status, answer.mx_hosts) == (DomainStatus.MX, ("mx.real-mail.net",))


def test_an_answer_too_big_for_udp_is_fetched_over_tcp(resolve, dns_server: DnsServer) -> None:
    hosts = [f"mx-{'x' * 40}.host{i:02d}.net" for i in range(40)]  # names compression cannot shorten
    dns_server.set("big-company.com", MX(*hosts))
    before = dns_server.queries
    answer = resolve("big-company.com")["big-company.com"]
    assert (answer.status, answer.mx_hosts) == (DomainStatus.MX, tuple(hosts))
    assert dns_server.queries - before == 2  # truncated over UDP, then whole over TCP


def test_the_loopback_server_speaks_tcp_as_dnspython_does(dns_server: DnsServer) -> None:
    # The server frames TCP messages with the resolver's own dnswire code; dnspython checks the framing.
    answer = dns.query.tcp(dns.message.make_query("good.com.", "MX"), "127.0.0.1", port=dns_server.port, timeout=2)
    assert sorted(rr.exchange.to_text() for rr in answer.answer[0]) == ["mx1.good.com.", "mx2.good.com."]


def test_ttl_is_kept_within_the_bounds(resolve, dns_server: DnsServer) -> None:
    dns_server.set("short.com", MX("mx.short.com", ttl=5))
    dns_server.set("long.com", MX("mx.long.com", ttl=86400 * 7))
    answers = resolve("short.com", "long.com")
    assert (answers["short.com"].ttl, answers["long.com"].ttl) == (60, 6 * 3600)


def test_negative_ttl_comes_from_the_soa(resolve, dns_server: DnsServer) -> None:
    # Not the 300 s default: min(the SOA record's TTL, its MINIMUM field of 300), RFC 2308.
    dns_server.set("gone-for-now.com", Behaviour("nxdomain", negative_ttl=120))
    dns_server.set("no-mail-for-now.com", Behaviour("a_only", negative_ttl=90))
    answers = resolve("gone-for-now.com", "no-mail-for-now.com")
    assert (answers["gone-for-now.com"].ttl, answers["no-mail-for-now.com"].ttl) == (120, 90)


def test_failures_are_not_cacheable(resolve) -> None:
    assert not resolve("servfail.com")["servfail.com"].cacheable
    assert resolve("nullmx.com")["nullmx.com"].cacheable


# --- nameservers, timeouts, many at once -----------------------------------------------------------


def test_a_silent_nameserver_is_passed_over_for_the_next(dns_server: DnsServer, second_server: DnsServer) -> None:
    dns_server.set("elsewhere.com", SILENT)
    resolver = resolver_for(dns_server, second_server, timeout=0.2, lifetime=2.0)
    answer = resolver.resolve(["elsewhere.com"])["elsewhere.com"]
    assert answer.mx_hosts == ("backup-mx.elsewhere.com",)


def test_servfail_moves_on_to_the_next_nameserver(dns_server: DnsServer, second_server: DnsServer) -> None:
    dns_server.set("flaky.com", SERVFAIL)
    started = time.monotonic()
    answer = resolver_for(dns_server, second_server, timeout=2.0, lifetime=2.0).resolve(["flaky.com"])["flaky.com"]
    assert answer.mx_hosts == ("backup-mx.flaky.com",)
    assert time.monotonic() - started < 1.0  # at once, not after a timeout


def test_a_lookup_gives_up_when_its_lifetime_is_over(dns_server: DnsServer) -> None:
    started = time.monotonic()
    answer = resolver_for(dns_server, timeout=0.1, lifetime=0.35).resolve(["silent.com"])["silent.com"]
    elapsed = time.monotonic() - started
    assert answer.status is DomainStatus.FAILURE
    assert 0.3 < elapsed < 1.0
    # Three tries of 0.1 s fit in the lifetime, then a last one cut short.
    assert dns_server.queries >= 3


def test_many_domains_resolve_concurrently(dns_server: DnsServer) -> None:
    dns_server.delay = 0.05
    dns_server.default = lambda name: MX("mx." + name)
    started = time.perf_counter()
    answers = resolver_for(dns_server, timeout=2, lifetime=2).resolve([f"d{i}.com" for i in range(500)])
    elapsed = time.perf_counter() - started
    dns_server.default = lambda name: NXDOMAIN
    assert len(answers) == 500 and all(a.mx_found for a in answers.values())
    assert elapsed < 2.0  # 500 x 50 ms one after another would take 25 s


def test_a_lookup_leaves_nothing_for_the_cyclic_collector(dns_server: DnsServer) -> None:
    """A batch, its sockets and every query it made are freed by reference counting as the lookup
    returns, answered or timed out: a cycle among them would keep a bulk chunk's hundreds of
    queries alive, and the collector walking them, until its next full pass."""
    resolver = resolver_for(dns_server, timeout=0.05, lifetime=0.12)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds unreachable is kept in gc.garbage, to be looked at
    try:
        answers = resolver.resolve(["good.com", "silent.com", *(f"d{i}.com" for i in range(50))])
        gc.collect()
        left = [type(found).__name__ for found in gc.garbage if type(found).__module__.startswith("verification")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert answers["silent.com"].status is DomainStatus.FAILURE  # its tries timed out, then it gave up
    assert answers["good.com"].mx_found
    assert left == []


# --- with a cache in front ----------------------------------------------------------------------------


def test_verify_many_looks_each_domain_up_once_and_keeps_order(dns_server: DnsServer) -> None:
    cache = DictCache()
    resolver = resolver_for(dns_server)
    before = dns_server.queries
    verdicts = verify_many(
        ["b@good.com", "A@Good.com", "bad", "x@nullmx.com", "y@servfail.com"],
        partial(lookup_domains, cache=cache, resolver=resolver),
    )
    assert [v.email for v in verdicts] == ["b@good.com", "a@good.com", "bad", "x@nullmx.com", "y@servfail.com"]
    assert [v.status for v in verdicts] == ["valid", "valid", "invalid", "invalid", "unknown"]
    assert set(cache.answers) == {"good.com", "nullmx.com"}  # the failure was not cached
    assert dns_server.queries - before == 3
    dns_server.set("nullmx.com", NULL_MX)


def test_a_forged_or_stray_answer_is_ignored() -> None:
    """A nameserver that first sends answers with the wrong id and the wrong question."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server:
        server.bind(("127.0.0.1", 0))

        def answer_badly() -> None:
            data, peer = server.recvfrom(4096)
            query_id = dns.message.from_wire(data).id
            wrong_id = (query_id ^ 1, "victim.com.", "evil.example.")
            wrong_question = (query_id, "other.com.", "evil.example.")
            right = (query_id, "victim.com.", "good-mx.victim.com.")
            for qid, name, exchange in (wrong_id, wrong_question, right):
                reply = dns.message.make_response(dns.message.make_query(name, "MX"))
                reply.id = qid
                reply.answer.append(dns.rrset.from_text(name, 300, "IN", "MX", f"10 {exchange}"))
                server.sendto(reply.to_wire(), peer)

        thread = threading.Thread(target=answer_badly)
        thread.start()
        address = f"127.0.0.1:{server.getsockname()[1]}"
        answer = resolver_for(address, timeout=1, lifetime=1).resolve(["victim.com"])["victim.com"]
        thread.join()
    assert answer.mx_hosts == ("good-mx.victim.com",)
