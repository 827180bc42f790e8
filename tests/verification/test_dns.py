"""MX lookups against real DNS servers on loopback, and the wire format checked against dnspython."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.rrset
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.dns_server import CNAME, HOST, MX, NULL_MX, NXDOMAIN, SERVFAIL, SILENT, Behaviour, DnsServer
from tests.support.examples import examples
from verification.engine import BatchResolver, DomainStatus, ResolverConfig, dnswire, mxhosts, verify_many
from verification.engine.dns import lookup_domains, parse_nameserver
from verification.engine.dnswire import WireError, decode_reply, encode_query
from verification.engine.mxhosts import HOST_LOOKUP_SECONDS, host_resolver


def resolver_for(*servers: DnsServer | str, timeout: float = 0.3, lifetime: float = 0.3) -> BatchResolver:
    addresses = tuple(s if isinstance(s, str) else s.address for s in servers)
    return BatchResolver(ResolverConfig(nameservers=addresses, timeout=timeout, lifetime=lifetime))


@pytest.fixture
def resolve(dns_server: DnsServer):
    resolver = resolver_for(dns_server)
    return lambda *domains: resolver.resolve(domains)


@pytest.fixture
def second_server() -> Iterator[DnsServer]:
    with DnsServer(default=lambda name: MX("backup-mx." + name)) as server:
        yield server


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


# --- an MX host's addresses (verification/engine/mxhosts.py) ---------------------------------------


def host_addresses(*servers: DnsServer, host: str, timeout: float = 0.3, lifetime: float = 0.3) -> list[str]:
    config = ResolverConfig(nameservers=tuple(s.address for s in servers), timeout=timeout, lifetime=lifetime)
    return asyncio.run(host_resolver(config)(host))


def test_an_mx_hosts_addresses_are_its_a_and_aaaa_records(dns_server: DnsServer) -> None:
    dns_server.set("mx.both.com", HOST("192.0.2.7", "2001:db8::7"))
    dns_server.set("mx.alias.com", CNAME("mx.both.com"))
    assert sorted(host_addresses(dns_server, host="mx.both.com")) == ["192.0.2.7", "2001:db8::7"]
    assert host_addresses(dns_server, host="192.0.2.8") == ["192.0.2.8"]  # an address literal: no query
    assert host_addresses(dns_server, host="nowhere.com") == []  # NXDOMAIN


def test_a_hosts_addresses_are_remembered_by_the_next_batch_for_their_ttl(dns_server: DnsServer) -> None:
    """A large deep job's hosts are asked when it is ordered and again by its batches: the second
    time, the process remembers them (for their TTL, at most REMEMBER_SECONDS)."""
    dns_server.set("mx.kept.com", HOST("192.0.2.40", "2001:db8::40"))
    dns_server.set("mx.brief.com", HOST("192.0.2.41", ttl=1))
    dns_server.set("mx.uncached.com", HOST("192.0.2.42", ttl=0))
    for host in ("mx.kept.com", "mx.brief.com", "mx.uncached.com"):
        assert host_addresses(dns_server, host=host)
    asked = dns_server.queries
    dns_server.set("mx.kept.com", HOST("192.0.2.99"))  # changed, within the old answer's TTL
    dns_server.set("mx.brief.com", HOST("192.0.2.98", ttl=1))
    assert sorted(host_addresses(dns_server, host="mx.kept.com")) == ["192.0.2.40", "2001:db8::40"]
    assert host_addresses(dns_server, host="mx.brief.com") == ["192.0.2.41"]
    assert dns_server.queries == asked  # neither was asked again
    assert host_addresses(dns_server, host="mx.uncached.com") == ["192.0.2.42"]  # TTL 0: asked again
    assert dns_server.queries == asked + 2
    time.sleep(1.05)
    assert host_addresses(dns_server, host="mx.brief.com") == ["192.0.2.98"]  # its TTL is over
    mxhosts.forget()
    assert host_addresses(dns_server, host="mx.kept.com") == ["192.0.2.99"]


def test_a_host_without_an_answer_is_not_remembered(
    dns_server: DnsServer, second_server: DnsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lookup that timed out, a host with no address, and another nameserver's answer are asked afresh."""
    monkeypatch.setattr(mxhosts, "HOST_LOOKUP_SECONDS", 0.5)
    dns_server.set("mx.late.com", SILENT)
    assert host_addresses(dns_server, host="mx.late.com") == []
    dns_server.set("mx.late.com", HOST("192.0.2.43"))
    assert host_addresses(dns_server, host="mx.late.com") == ["192.0.2.43"]
    assert host_addresses(dns_server, host="mx.none.com") == []  # NXDOMAIN
    dns_server.set("mx.none.com", HOST("192.0.2.44"))
    assert host_addresses(dns_server, host="mx.none.com") == ["192.0.2.44"]
    second_server.set("mx.late.com", HOST("192.0.2.45"))
    assert host_addresses(second_server, host="mx.late.com") == ["192.0.2.45"]


def test_an_address_answers_ttl_is_the_least_of_its_records_and_cnames() -> None:
    query = dns.message.make_query("mx.alias.com", "A")
    response = dns.message.make_response(query)
    response.answer.append(dns.rrset.from_text("mx.alias.com.", 60, "IN", "CNAME", "mx.real.com."))
    response.answer.append(dns.rrset.from_text("mx.real.com.", 300, "IN", "A", "192.0.2.46", "192.0.2.47"))
    reply = decode_reply(response.to_wire())
    assert (sorted(reply.addresses), reply.address_ttl) == (["192.0.2.46", "192.0.2.47"], 60)  # a set's order
    response.answer[0].ttl = 3600
    assert decode_reply(response.to_wire()).address_ttl == 300
    response.answer.pop()
    assert decode_reply(response.to_wire()).address_ttl is None  # no address: nothing to keep


def test_a_batchs_host_lookups_share_a_few_sockets_and_close_them(dns_server: DnsServer) -> None:
    """Four hundred hosts' A and AAAA queries go out over at most SOCKETS_PER_NAMESERVER sockets
    (source ports), not a socket a query, and none is left open once the lookups are done."""
    hosts = [f"mx{i}.many.com" for i in range(400)]
    for i, host in enumerate(hosts):
        dns_server.set(host, HOST(f"192.0.2.{i % 250 + 1}"))
    config = ResolverConfig(nameservers=(dns_server.address,), timeout=1.0, lifetime=2.0)
    dns_server.clients.clear()

    async def batch() -> tuple[list[list[str]], set[int]]:
        lookups = host_resolver(config)
        found = await asyncio.gather(*(lookups(host) for host in hosts))
        return found, _udp_ports_open()  # while the lookups are still at hand, not garbage

    found, still_open = asyncio.run(batch())
    assert found == [[f"192.0.2.{i % 250 + 1}"] for i in range(400)]
    ports = {port for _, port in dns_server.clients}
    assert len(ports) <= 8 and ports.isdisjoint(still_open)


def _udp_ports_open() -> set[int]:
    """The local ports of this process's open IPv4 UDP sockets (/proc/net/udp, by socket inode)."""
    mine = set()
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile
            mine.add(os.readlink(fd))
    lines = Path("/proc/net/udp").read_text().splitlines()[1:]
    fields = [line.split() for line in lines]
    return {int(f[1].rsplit(":", 1)[1], 16) for f in fields if f"socket:[{f[9]}]" in mine}


def test_host_lookups_keep_at_most_the_configured_queries_in_flight(dns_server: DnsServer) -> None:
    """VERIFIER_DNS_CONCURRENCY bounds the host lookups as it does the domain lookups: 16 hosts' 32
    queries, 4 at a time, each answered 50 ms late, take at least 8 turns of 50 ms."""
    hosts = [f"mx{i}.paced.com" for i in range(16)]
    for host in hosts:
        dns_server.set(host, HOST("192.0.2.30"))
    dns_server.delay = 0.05
    config = ResolverConfig(nameservers=(dns_server.address,), timeout=2.0, lifetime=2.0, concurrency=4)

    async def batch() -> list[list[str]]:
        lookups = host_resolver(config)
        return await asyncio.gather(*(lookups(host) for host in hosts))

    started = time.monotonic()
    assert asyncio.run(batch()) == [["192.0.2.30"]] * 16
    assert time.monotonic() - started >= 8 * 0.05 * 0.9  # all 32 at once would take one turn


def test_a_warmed_answer_is_the_one_a_query_would_have_built(dns_server: DnsServer, second_server: DnsServer) -> None:
    """DnsServer.warm (the benchmark farm's, before its clock) answers as a cold server does."""
    for server in (dns_server, second_server):
        server.set("mx1.warm.com", HOST("192.0.2.20"))
        server.set("warm.com", MX("mx1.warm.com"))
    for rdtype in (dnswire.A, dnswire.AAAA):
        dns_server.warm(["mx1.warm.com"], rdtype)
    dns_server.warm(["warm.com"], dnswire.MX)
    for name, rdtype in (("mx1.warm.com", "A"), ("mx1.warm.com", "AAAA"), ("warm.com", "MX")):
        query = dns.message.make_query(name, rdtype)
        warm, cold = (dns.query.udp(query, "127.0.0.1", port=s.port, timeout=2) for s in (dns_server, second_server))
        assert (warm.rcode(), warm.answer, warm.authority) == (cold.rcode(), cold.answer, cold.authority)
        assert warm.answer or warm.authority


def test_a_late_answer_about_an_mx_host_still_counts(dns_server: DnsServer) -> None:
    """Slower than the domain lookups' whole lifetime (a loaded machine): the host still has its
    address, rather than its recipients going to a backup host or being answered unreachable."""
    dns_server.set("mx.late.com", HOST("192.0.2.9"))
    dns_server.delay = 0.7
    started = time.monotonic()
    assert host_addresses(dns_server, host="mx.late.com", timeout=0.2, lifetime=0.3) == ["192.0.2.9"]
    assert time.monotonic() - started < HOST_LOOKUP_SECONDS


def test_a_silent_or_failing_nameserver_is_passed_over_for_an_mx_host(
    dns_server: DnsServer, second_server: DnsServer
) -> None:
    second_server.set("mx.elsewhere.com", HOST("192.0.2.11"))
    dns_server.set("mx.elsewhere.com", SILENT)
    assert host_addresses(dns_server, second_server, host="mx.elsewhere.com") == ["192.0.2.11"]
    dns_server.set("mx.elsewhere.com", SERVFAIL)
    started = time.monotonic()
    assert host_addresses(dns_server, second_server, host="mx.elsewhere.com", timeout=2.0) == ["192.0.2.11"]
    assert time.monotonic() - started < 1.0  # at once, not after a timeout


def test_a_host_nobody_answers_for_has_no_address_once_its_lifetime_is_over(dns_server: DnsServer) -> None:
    dns_server.set("mx.silent.com", SILENT)
    started = time.monotonic()
    assert host_addresses(dns_server, host="mx.silent.com", timeout=0.1, lifetime=0.2) == []
    assert HOST_LOOKUP_SECONDS - 0.1 < time.monotonic() - started < HOST_LOOKUP_SECONDS + 1


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


@pytest.mark.parametrize(
    ("spec", "address", "port"),
    [
        ("192.0.2.53", "192.0.2.53", 53),
        ("127.0.0.1:5353", "127.0.0.1", 5353),
        ("[::1]:5300", "::1", 5300),
        ("::1", "::1", 53),
    ],
)
def test_nameserver_settings_take_host_or_host_and_port(spec: str, address: str, port: int) -> None:
    assert parse_nameserver(spec) == (address, port)
    assert BatchResolver(ResolverConfig(nameservers=(spec,))).nameservers == ((address, port),)


def test_without_nameservers_the_systems_are_used() -> None:
    assert BatchResolver(ResolverConfig()).nameservers  # read from /etc/resolv.conf by dnspython


# --- with a cache in front ----------------------------------------------------------------------------


class DictCache:
    def __init__(self) -> None:
        self.data: dict = {}

    def get_many(self, domains):
        return {d: self.data[d] for d in domains if d in self.data}

    def put_many(self, answers):
        self.data.update({a.domain: a for a in answers})


def test_verify_many_looks_each_domain_up_once_and_keeps_order(dns_server: DnsServer) -> None:
    cache = DictCache()
    resolver = resolver_for(dns_server)
    before = dns_server.queries
    verdicts = verify_many(
        ["b@good.com", "A@Good.com", "bad", "x@nullmx.com", "y@servfail.com"],
        lambda domains: lookup_domains(domains, cache=cache, resolver=resolver),
    )
    assert [v.email for v in verdicts] == ["b@good.com", "a@good.com", "bad", "x@nullmx.com", "y@servfail.com"]
    assert [v.status for v in verdicts] == ["valid", "valid", "invalid", "invalid", "unknown"]
    assert set(cache.data) == {"good.com", "nullmx.com"}  # the failure was not cached
    assert dns_server.queries - before == 3
    dns_server.set("nullmx.com", NULL_MX)


# --- the wire format, against dnspython's ---------------------------------------------------------------

_label = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=20)
_name = st.lists(_label, min_size=1, max_size=4).map(".".join)


@pytest.mark.parametrize(
    "behaviour",
    [
        MX("mx.shop.com"),
        MX("mx1.shop.com", "backup.mail-host.net", "shop.com", ttl=77),
        Behaviour("mx", ((0, "."),)),
        Behaviour("mx", ((0, "."), (5, "MX.Shop.Com."))),
    ],
)
def test_the_servers_hand_built_mx_answer_equals_dnspythons(behaviour: Behaviour) -> None:
    from tests.support.dns_server import _fill, _mx_template

    expected = dns.message.make_response(dns.message.make_query("shop.com.", "MX"))
    expected.flags |= dns.flags.AA
    _fill(expected, expected.question[0].name, dns.rdatatype.MX, behaviour)
    built = dns.message.from_wire(_mx_template("shop.com", behaviour))
    assert (built.flags, built.question, built.answer) == (expected.flags, expected.question, expected.answer)


def test_queries_are_what_dnspython_reads() -> None:
    query = dns.message.from_wire(encode_query(4711, "Mail.Example.com"))
    assert (query.id, query.question[0].to_text()) == (4711, "Mail.Example.com. IN MX")
    assert query.flags & dns.flags.RD and query.edns == 0 and query.payload == 1232


@settings(max_examples=examples(300), deadline=None)
@given(
    qname=_name,
    records=st.sets(st.tuples(st.integers(0, 65535), _name), max_size=6),
    ttl=st.integers(0, 2**31 - 1),
    rcode=st.sampled_from([dns.rcode.NOERROR, dns.rcode.NXDOMAIN, dns.rcode.SERVFAIL]),
)
def test_decoded_answers_match_dnspython(qname: str, records: set[tuple[int, str]], ttl: int, rcode: int) -> None:
    response = dns.message.make_response(dns.message.make_query(qname + ".", "MX"))
    response.set_rcode(rcode)
    if records:
        rdatas = [f"{preference} {host}." for preference, host in records]
        response.answer.append(dns.rrset.from_text(qname + ".", ttl, "IN", "MX", *rdatas))
    wire = response.to_wire()  # dnspython compresses names where it can
    reply, expected = decode_reply(wire), dns.message.from_wire(wire)
    assert (reply.qid, reply.rcode, reply.question) == (expected.id, expected.rcode(), qname.lower())
    exchanges = {(rr.preference, rr.exchange.to_text(omit_final_dot=True)) for rrset in expected.answer for rr in rrset}
    assert {(preference, host) for preference, host, _ in reply.mx} == exchanges
    assert all(record_ttl == ttl for _, _, record_ttl in reply.mx)


@settings(max_examples=examples(300), deadline=None)
@given(
    qname=_name,
    target=_name,
    addresses=st.sets(st.ip_addresses(), max_size=5),
    via_cname=st.booleans(),
)
def test_decoded_address_answers_match_dnspython(
    qname: str, target: str, addresses: set[ipaddress.IPv4Address | ipaddress.IPv6Address], via_cname: bool
) -> None:
    response = dns.message.make_response(dns.message.make_query(qname + ".", "A"))
    owner = target if via_cname and target != qname else qname
    if owner != qname:
        response.answer.append(dns.rrset.from_text(qname + ".", 60, "IN", "CNAME", owner + "."))
    for family in ("A", "AAAA"):
        found = [str(a) for a in addresses if (a.version == 6) == (family == "AAAA")]
        if found:
            response.answer.append(dns.rrset.from_text(owner + ".", 60, "IN", family, *found))
    response.answer.append(dns.rrset.from_text("other." + qname + ".", 60, "IN", "A", "192.0.2.99"))  # not ours
    reply = decode_reply(response.to_wire())
    assert sorted(map(ipaddress.ip_address, reply.addresses), key=str) == sorted(addresses, key=str)


def test_address_queries_are_what_dnspython_reads() -> None:
    query = dns.message.from_wire(encode_query(4711, "mx.example.com", 28))
    assert (query.id, query.question[0].to_text()) == (4711, "mx.example.com. IN AAAA")


@settings(max_examples=examples(500), deadline=None)
@given(st.binary(max_size=300))
def test_garbage_is_refused_cleanly(data: bytes) -> None:
    # Anything but a WireError (IndexError, UnicodeError...) fails the test.
    with contextlib.suppress(WireError):
        decode_reply(data)


def test_compression_loops_are_refused() -> None:
    looped = bytes.fromhex("1234 8180 0001 0000 0000 0000") + b"\xc0\x0c" + b"\x00\x0f\x00\x01"
    with pytest.raises(WireError):
        decode_reply(looped)
