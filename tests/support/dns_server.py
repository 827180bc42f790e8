"""A real DNS server on loopback, for tests and benchmarks.

It answers MX queries over UDP from a small zone description, with an optional
delay per answer, so the verifier's dnspython resolver talks to it exactly as it
would to a production resolver. Nothing in dnspython is mocked.

Behaviours: MX hosts, A-only (no MX), null MX, NXDOMAIN, SERVFAIL, and silence
(the query is dropped, so the client times out).
"""

from __future__ import annotations

import contextlib
import heapq
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset

ZONE_SOA = "ns.loopback. hostmaster.loopback. 1 3600 600 86400 300"


@dataclass(frozen=True)
class Behaviour:
    kind: str  # "mx", "a_only", "null_mx", "nxdomain", "servfail", "silent"
    mx: tuple[tuple[int, str], ...] = ()
    ttl: int = 3600
    negative_ttl: int = 300


MX = lambda *hosts, ttl=3600: Behaviour("mx", tuple((10 * (i + 1), h) for i, h in enumerate(hosts)), ttl)  # noqa: E731
A_ONLY = Behaviour("a_only")
NULL_MX = Behaviour("null_mx")
NXDOMAIN = Behaviour("nxdomain")
SERVFAIL = Behaviour("servfail")
SILENT = Behaviour("silent")


@dataclass
class DnsServer:
    zone: dict[str, Behaviour] = field(default_factory=dict)
    default: Callable[[str], Behaviour] = lambda name: NXDOMAIN
    delay: float = 0.0
    host: str = "127.0.0.1"
    port: int = 0
    queries: int = 0

    def __post_init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self._sock.bind((self.host, self.port))
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="loopback-dns", daemon=True)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def set(self, name: str, behaviour: Behaviour) -> None:
        self.zone[name.lower().rstrip(".")] = behaviour

    def behaviour(self, name: str) -> Behaviour:
        name = name.lower().rstrip(".")
        return self.zone.get(name) or self.default(name)

    def start(self) -> DnsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()

    def __enter__(self) -> DnsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._sock, selectors.EVENT_READ)
        self._sock.setblocking(False)
        pending: list[tuple[float, int, bytes, tuple[str, int]]] = []
        seq = 0
        while not self._stop.is_set():
            wait = 0.1 if not pending else max(0.0, pending[0][0] - time.monotonic())
            if selector.select(timeout=wait):
                while True:
                    try:
                        data, peer = self._sock.recvfrom(4096)
                    except BlockingIOError:
                        break
                    reply = self._answer(data)
                    if reply is not None:
                        seq += 1
                        heapq.heappush(pending, (time.monotonic() + self.delay, seq, reply, peer))
            now = time.monotonic()
            while pending and pending[0][0] <= now:
                _, _, reply, peer = heapq.heappop(pending)
                with contextlib.suppress(OSError):
                    self._sock.sendto(reply, peer)

    def _answer(self, data: bytes) -> bytes | None:
        try:
            query = dns.message.from_wire(data)
        except Exception:
            return None
        self.queries += 1
        question = query.question[0]
        behaviour = self.behaviour(question.name.to_text())
        if behaviour.kind == "silent":
            return None
        response = dns.message.make_response(query)
        response.flags |= dns.flags.AA
        _fill(response, question.name, question.rdtype, behaviour)
        return response.to_wire()


def _fill(response: dns.message.Message, qname: dns.name.Name, rdtype: int, behaviour: Behaviour) -> None:
    kind = behaviour.kind
    if kind == "servfail":
        response.set_rcode(dns.rcode.SERVFAIL)
        return
    if kind == "nxdomain":
        response.set_rcode(dns.rcode.NXDOMAIN)
        response.authority.append(_soa(qname, behaviour.negative_ttl))
        return
    if rdtype == dns.rdatatype.MX and kind == "mx":
        records = [f"{pref} {host.rstrip('.')}." for pref, host in behaviour.mx]
        response.answer.append(dns.rrset.from_text(qname, behaviour.ttl, "IN", "MX", *records))
    elif rdtype == dns.rdatatype.MX and kind == "null_mx":
        response.answer.append(dns.rrset.from_text(qname, behaviour.ttl, "IN", "MX", "0 ."))
    elif rdtype == dns.rdatatype.A:
        response.answer.append(dns.rrset.from_text(qname, behaviour.ttl, "IN", "A", "192.0.2.10"))
    else:
        response.authority.append(_soa(qname, behaviour.negative_ttl))


def _soa(qname: dns.name.Name, ttl: int) -> dns.rrset.RRset:
    return dns.rrset.from_text(qname.parent() if len(qname) > 2 else qname, ttl, "IN", "SOA", ZONE_SOA)
