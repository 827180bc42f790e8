"""An MX host's addresses (verification/engine/mxhosts.py) from real DNS servers on loopback: A and AAAA,
remembered for their TTL, looked up a few sockets and queries at a time, forged answers ignored."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.rrset
import pytest

from tests.support.dns_server import CNAME, HOST, MX, SERVFAIL, SILENT, DnsServer
from tests.support.waiting import wait_until_async
from verification.engine import BatchResolver, ResolverConfig, dnswire, mxhosts
from verification.engine.dns import parse_nameserver
from verification.engine.dnswire import decode_reply
from verification.engine.mxhosts import HOST_LOOKUP_SECONDS, host_resolver

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


def test_a_hosts_addresses_are_remembered_by_the_next_batch_for_their_ttl(
    dns_server: DnsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    # The process's clock moves on past the brief answer's TTL (what it remembers is kept by
    # time.monotonic, which time_machine leaves alone).
    clock = time.monotonic
    monkeypatch.setattr(time, "monotonic", lambda: clock() + 1.05)
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


def _looked_up(config: ResolverConfig, hosts: list[str]) -> list[list[str]]:
    """The hosts' addresses, looked up at once by one batch's resolver."""

    async def batch() -> list[list[str]]:
        lookups = host_resolver(config)
        return await asyncio.gather(*(lookups(host) for host in hosts))

    return asyncio.run(batch())


def test_host_lookups_keep_at_most_the_configured_queries_in_flight(dns_server: DnsServer) -> None:
    """VERIFIER_DNS_CONCURRENCY bounds the host lookups as it does the domain lookups: 16 hosts' 32
    queries, 4 at a time, each answered 50 ms late, take at least 8 turns of 50 ms."""
    hosts = [f"mx{i}.paced.com" for i in range(16)]
    for host in hosts:
        dns_server.set(host, HOST("192.0.2.30"))
    dns_server.delay = 0.05
    config = ResolverConfig(nameservers=(dns_server.address,), timeout=2.0, lifetime=2.0, concurrency=4)

    started = time.monotonic()
    assert _looked_up(config, hosts) == [["192.0.2.30"]] * 16
    assert time.monotonic() - started >= 8 * 0.05 * 0.9  # all 32 at once would take one turn


def test_a_host_lookups_lifetime_starts_when_its_query_is_sent_not_while_it_waits_its_turn(
    dns_server: DnsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight hosts' 16 queries one at a time, each answered 50 ms late, take 0.8 s: past a lifetime
    of 0.3 s, which is each query's own, so every host still has its address."""
    monkeypatch.setattr(mxhosts, "HOST_LOOKUP_SECONDS", 0.3)
    hosts = [f"mx{i}.queued.com" for i in range(8)]
    for host in hosts:
        dns_server.set(host, HOST("192.0.2.31"))
    dns_server.delay = 0.05
    config = ResolverConfig(nameservers=(dns_server.address,), timeout=0.3, lifetime=0.3, concurrency=1)

    assert _looked_up(config, hosts) == [["192.0.2.31"]] * 8


def test_a_lookup_cut_short_closes_its_sockets_and_ignores_its_late_answer(dns_server: DnsServer) -> None:
    """Prober.ask's deadline cancels the lookups under way: their sockets close at once, and the answer
    that comes after finds no lookup to end (nothing is raised inside the event loop)."""
    dns_server.set("mx.slow.com", HOST("192.0.2.50"))
    dns_server.delay = 0.1
    config = ResolverConfig(nameservers=(dns_server.address,), timeout=1.0, lifetime=1.0)
    dns_server.clients.clear()

    async def cut() -> list[dict[str, object]]:
        errors: list[dict[str, object]] = []
        asyncio.get_running_loop().set_exception_handler(lambda _, context: errors.append(context))
        lookups = host_resolver(config)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(lookups("mx.slow.com"), 0.02)
        ports = {port for _, port in dns_server.clients}

        async def closed() -> bool:
            return bool(ports) and ports.isdisjoint(_udp_ports_open())

        await wait_until_async(closed, "the cancelled lookup's sockets closed", 0.05)
        return errors

    assert asyncio.run(cut()) == []


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
