"""An MX host's addresses (A, then AAAA), asked of the configured nameservers, never of the
system's name lookup (getaddrinfo): a host name read from DNS is resolved by DNS alone.

The queries are plain datagrams on the event loop, encoded and decoded by dnswire.py: a
2,000-row deep job asks for hundreds of hosts' addresses, and dnspython's resolver spent more CPU
on them (~0.45 ms a query) than the job's SMTP sessions did. Each lookup has a socket of its own
and a random id; an answer counts only from a configured nameserver, with that id and the
question asked.

A host lookup may take up to HOST_LOOKUP_SECONDS, asked again every `timeout` meanwhile (each
nameserver in turn), however short the domain lookups' lifetime (VERIFIER_DNS_LIFETIME, tuned for
a bulk chunk's thousands of domains): an MX host whose A answer comes late is not the same as one
with no address, and taking it for one would hand its recipients to a backup host (or answer them
smtp_unreachable) for a lost UDP packet. A lookup runs once per host and batch, beside sessions
that take seconds. An answer that is not NOERROR, or names no address, gives none of that type.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import secrets
import socket
import time

from verification.engine import dnswire
from verification.engine.dns import Nameserver, ResolverConfig, parse_nameserver, system_nameservers
from verification.engine.smtp_scheduling import HostResolver

# The least time a host lookup may take (retries included), whatever VERIFIER_DNS_LIFETIME says.
HOST_LOOKUP_SECONDS = 3.0
_LARGEST_ANSWER = 65535


def host_resolver(config: ResolverConfig) -> HostResolver:
    """A cached lookup of MX hosts' addresses for one batch of sessions."""
    specs = config.nameservers
    servers = [parse_nameserver(spec) for spec in specs] if specs else list(system_nameservers())
    lifetime = max(config.lifetime, HOST_LOOKUP_SECONDS)
    found: dict[str, asyncio.Task[list[str]]] = {}

    async def addresses(host: str) -> list[str]:
        if host not in found:
            found[host] = asyncio.ensure_future(_addresses(servers, host, config.timeout, lifetime))
        return await found[host]

    return addresses


async def _addresses(servers: list[Nameserver], host: str, timeout: float, lifetime: float) -> list[str]:
    try:
        return [str(ipaddress.ip_address(host))]  # an MX naming an address literal
    except ValueError:
        pass
    answers = await asyncio.gather(
        *(_lookup(servers, host, rdtype, timeout, lifetime) for rdtype in (dnswire.A, dnswire.AAAA))
    )
    return [address for answer in answers for address in answer]


async def _lookup(servers: list[Nameserver], host: str, rdtype: int, timeout: float, lifetime: float) -> list[str]:
    """The host's addresses of one type. The query goes to each nameserver in turn, again every
    `timeout`, for `lifetime` in all, on sockets kept open throughout: an answer to an earlier try
    that comes late still counts (a loaded nameserver is slow on every try alike)."""
    name = host.rstrip(".").lower()
    qid = secrets.randbits(16)
    try:
        query = dnswire.encode_query(qid, name, rdtype)
    except (dnswire.WireError, UnicodeError):  # not a name a query can carry
        return []
    answers: asyncio.Queue[dnswire.Reply] = asyncio.Queue()
    sockets: dict[int, socket.socket] = {}
    listening: list[asyncio.Task[None]] = []
    deadline = time.monotonic() + lifetime
    try:
        for turn in itertools.count():
            left = deadline - time.monotonic()
            if left <= 0 or not servers:
                break
            server = servers[turn % len(servers)]
            family = socket.AF_INET6 if ":" in server[0] else socket.AF_INET
            if family not in sockets:
                sockets[family] = sock = socket.socket(family, socket.SOCK_DGRAM)
                sock.setblocking(False)
                listening.append(asyncio.ensure_future(_listen(sock, servers, qid, name, answers)))
            with contextlib.suppress(OSError):
                await asyncio.get_running_loop().sock_sendto(sockets[family], query, server)
            with contextlib.suppress(TimeoutError):
                reply = await asyncio.wait_for(answers.get(), min(timeout, left))
                if reply.rcode in (dnswire.NOERROR, dnswire.NXDOMAIN):
                    return list(reply.addresses)
                # SERVFAIL, REFUSED: that nameserver cannot say; the next one is asked at once
    finally:
        for task in listening:
            task.cancel()
        # Closed only once the listeners are done, so no reader is left on a descriptor number
        # that a later socket may be given.
        await asyncio.gather(*listening, return_exceptions=True)
        for sock in sockets.values():
            sock.close()
    return []


async def _listen(
    sock: socket.socket, servers: list[Nameserver], qid: int, name: str, answers: asyncio.Queue[dnswire.Reply]
) -> None:
    """Puts in `answers` each datagram from a nameserver answering our id and question."""
    loop = asyncio.get_running_loop()
    senders = {(ipaddress.ip_address(address), port) for address, port in servers}
    while True:
        try:
            data, peer = await loop.sock_recvfrom(sock, _LARGEST_ANSWER)
        except OSError:
            continue  # an ICMP "port unreachable" from a nameserver that is down: keep listening
        if (ipaddress.ip_address(peer[0]), peer[1]) not in senders:
            continue
        try:
            reply = dnswire.decode_reply(data)
        except dnswire.WireError:
            continue
        if reply.qid == qid and reply.question == name:
            answers.put_nowait(reply)
