"""A real DNS server on loopback, for tests and benchmarks.

It answers over UDP and TCP from a small zone description, with an optional delay
per answer, so the verifier's resolver talks to it exactly as it would to a
production resolver. Answers are built with dnspython's message API, once per name
and type, then sent with each query's id and question: the server stays cheap
enough to share two cores with a benchmark. An answer too big for the client's
UDP size goes out truncated (TC), as a real server's would.

Behaviours: MX hosts (any hosts: MX("aspmx.l.google.com")), A-only (no MX), an MX host's own
addresses (HOST("127.0.0.5"): its A and AAAA records), an address's PTR records, null MX,
NXDOMAIN, SERVFAIL, a CNAME to another name, and silence (the query is dropped, so the
client times out).

Whole-server modes, for a resolver that lies (captive DNS, a corporate resolver without
recursion): set `everything` to NXDOMAIN, REFUSED or SILENT and every name gets that answer,
whatever the zone says; back to None, and the zone answers again.

Weather: `loss` drops that share of UDP queries at random, and `max_qps` answers at most that
many a second (a token bucket, as cloud resolvers police a client), dropping the rest.
"""

from __future__ import annotations

import contextlib
import heapq
import random
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset

from verification.engine import dnswire

ZONE_SOA = "ns.loopback. hostmaster.loopback. 1 3600 600 86400 300"


@dataclass(frozen=True)
class Behaviour:
    kind: str  # "mx", "a_only", "null_mx", "nxdomain", "servfail", "refused", "silent", "cname", "ptr"
    mx: tuple[tuple[int, str], ...] = ()  # for "cname": ((0, target),); for "ptr": ((0, name), ...)
    ttl: int = 3600
    negative_ttl: int = 300
    addresses: tuple[str, ...] = ()  # A (and AAAA) records: an MX host's addresses


MX = lambda *hosts, ttl=3600: Behaviour("mx", tuple((10 * (i + 1), h) for i, h in enumerate(hosts)), ttl)  # noqa: E731
A_ONLY = Behaviour("a_only")
NULL_MX = Behaviour("null_mx")
NXDOMAIN = Behaviour("nxdomain")
SERVFAIL = Behaviour("servfail")
REFUSED = Behaviour("refused")
SILENT = Behaviour("silent")
CNAME = lambda target: Behaviour("cname", ((0, target),))  # noqa: E731
HOST = lambda *addresses, ttl=3600: Behaviour("a_only", ttl=ttl, addresses=addresses)  # noqa: E731  an MX host name
# An address's reverse name (dns.reversename.from_address) naming hosts: its PTR records, and nothing else.
PTR = lambda *names: Behaviour("ptr", tuple((0, name) for name in names))  # noqa: E731


@dataclass
class DnsServer:
    zone: dict[str, Behaviour] = field(default_factory=dict)
    default: Callable[[str], Behaviour] = lambda name: NXDOMAIN
    delay: float = 0.0
    host: str = "127.0.0.1"
    port: int = 0
    queries: int = 0
    loss: float = 0.0  # share of UDP queries dropped at random
    max_qps: float | None = None  # UDP answers a second at most; the rest are dropped
    dropped: int = 0
    clients: set[tuple[str, int]] = field(default_factory=set)  # the (address, port) of each UDP query's sender
    everything: Behaviour | None = None  # a whole-server mode: this answer for every name

    def __post_init__(self) -> None:
        self._random = random.Random(1)
        self._tokens, self._refilled = 0.0, time.monotonic()
        self._sock, self._tcp = _bind_pair(self.host, self.port)
        self.port = self._sock.getsockname()[1]
        self._templates: dict[tuple[str, int, Behaviour], bytes] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="loopback-dns", daemon=True)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def set(self, name: str, behaviour: Behaviour) -> None:
        self.zone[name.lower().rstrip(".")] = behaviour

    def behaviour(self, name: str) -> Behaviour:
        if self.everything is not None:
            return self.everything
        name = name.lower().rstrip(".")
        return self.zone.get(name) or self.default(name)

    def warm(self, names: Iterable[str], qtype: int) -> None:
        """Build the answers to `qtype` queries for these names now rather than at their first
        query: a benchmark's farm does it before its clock, as a real resolver answers such names
        from its cache (building an answer with dnspython costs ~0.3 ms of this server's CPU)."""
        for name in names:
            qname = name.lower().rstrip(".")
            behaviour = self.behaviour(qname)
            self._templates.setdefault((qname, qtype, behaviour), _template(qname, qtype, behaviour))

    def start(self) -> DnsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()
        self._tcp.close()

    def __enter__(self) -> DnsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._sock, selectors.EVENT_READ)
        selector.register(self._tcp, selectors.EVENT_READ)
        self._sock.setblocking(False)
        pending: list[tuple[float, int, bytes, tuple[str, int]]] = []
        seq = 0
        while not self._stop.is_set():
            wait = 0.1 if not pending else max(0.0, pending[0][0] - time.monotonic())
            for key, _ in selector.select(timeout=wait):
                if key.fileobj is self._tcp:
                    self._serve_tcp()
                    continue
                while True:
                    try:
                        data, peer = self._sock.recvfrom(4096)
                    except BlockingIOError:
                        break
                    self.clients.add(peer)
                    if self._weather_drops():
                        continue
                    reply = self._answer(data)
                    if reply is not None:
                        seq += 1
                        heapq.heappush(pending, (time.monotonic() + self.delay, seq, reply, peer))
            now = time.monotonic()
            while pending and pending[0][0] <= now:
                _, _, reply, peer = heapq.heappop(pending)
                with contextlib.suppress(OSError):
                    self._sock.sendto(reply, peer)

    def _weather_drops(self) -> bool:
        if self.loss and self._random.random() < self.loss:
            self.dropped += 1
            return True
        if self.max_qps:
            now = time.monotonic()
            burst = max(1.0, self.max_qps / 100)  # 10 ms of the rate
            self._tokens = min(burst, self._tokens + (now - self._refilled) * self.max_qps)
            self._refilled = now
            if self._tokens < 1.0:
                self.dropped += 1
                return True
            self._tokens -= 1.0
        return False

    def _serve_tcp(self) -> None:
        """One query on a new connection, answered whole (no delay, no truncation); tests only."""
        conn, _ = self._tcp.accept()
        with conn:
            conn.settimeout(2)
            with contextlib.suppress(OSError):
                reply = self._answer(dnswire.read_tcp_message(conn), udp=False)
                if reply is not None:
                    conn.sendall(dnswire.tcp_frame(reply))

    def _answer(self, data: bytes, udp: bool = True) -> bytes | None:
        try:
            qname, qtype, end = _question(data)
        except (IndexError, ValueError):
            return None
        self.queries += 1
        behaviour = self.behaviour(qname)
        if behaviour.kind == "silent":
            return None
        key = (qname, qtype, behaviour)
        if key not in self._templates:
            self._templates[key] = _template(qname, qtype, behaviour)
        template = self._templates[key]
        # The template was made for the same name, so its compression pointers fit this question.
        reply = data[:2] + template[2:12] + data[12:end] + template[end:]
        if udp and len(reply) > _udp_limit(data, end):
            flags = int.from_bytes(template[2:4]) | 0x0200  # TC: ask again over TCP
            return data[:2] + flags.to_bytes(2) + b"\0\1\0\0\0\0\0\0" + data[12:end]
        return reply


def _bind_pair(host: str, port: int) -> tuple[socket.socket, socket.socket]:
    """A UDP and a TCP socket on one port (any free one when `port` is 0)."""
    for _ in range(20):
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        udp.bind((host, port))
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            tcp.bind((host, udp.getsockname()[1]))
        except OSError:
            udp.close()
            tcp.close()
            continue
        tcp.listen(16)
        return udp, tcp
    raise OSError("no port free for both UDP and TCP")


def _question(data: bytes) -> tuple[str, int, int]:
    """(lowercase name, type, end of the question section) read straight off a query."""
    pos, labels = 12, []
    while data[pos]:
        labels.append(data[pos + 1 : pos + 1 + data[pos]])
        pos += 1 + data[pos]
    qtype = int.from_bytes(data[pos + 1 : pos + 3])
    if len(data) < pos + 5:
        raise ValueError("short question")
    return b".".join(labels).decode("ascii", "replace").lower(), qtype, pos + 5


def _udp_limit(data: bytes, end: int) -> int:
    """The client's UDP size: its EDNS0 OPT record's, else 512 (RFC 6891)."""
    if len(data) >= end + 11 and data[end] == 0 and data[end + 1 : end + 3] == b"\0\x29":
        return max(512, int.from_bytes(data[end + 3 : end + 5]))
    return 512


def _template(qname: str, qtype: int, behaviour: Behaviour) -> bytes:
    if behaviour.kind == "mx" and qtype == dns.rdatatype.MX:
        return _mx_template(qname, behaviour)
    name = dns.name.from_text(qname)
    response = dns.message.make_response(dns.message.make_query(name, qtype))
    response.flags |= dns.flags.AA
    _fill(response, name, qtype, behaviour)
    return response.to_wire()


def _mx_template(qname: str, behaviour: Behaviour) -> bytes:
    """The answer _fill builds for an MX query, encoded by hand: a benchmark asks about tens of
    thousands of new names, and dnspython takes ~0.1 ms to build each (tests compare the two)."""
    header = struct.pack("!HHHHHH", 0, 0x8500, 1, len(behaviour.mx), 0, 0)  # QR AA RD
    question = _labels(qname) + struct.pack("!HH", dns.rdatatype.MX, dns.rdataclass.IN)
    records = b""
    for preference, host in behaviour.mx:
        exchange = _exchange(host.rstrip(".").lower(), qname)
        rdata = struct.pack("!H", preference) + exchange
        records += _QNAME_POINTER + struct.pack("!HHIH", dns.rdatatype.MX, dns.rdataclass.IN, behaviour.ttl, len(rdata))
        records += rdata
    return header + question + records


_QNAME_POINTER = b"\xc0\x0c"  # the question's name, at offset 12


def _exchange(host: str, qname: str) -> bytes:
    if host == qname:
        return _QNAME_POINTER
    if host.endswith("." + qname):
        return _labels(host[: -len(qname) - 1], end=_QNAME_POINTER)
    return _labels(host) if host else b"\0"


def _labels(name: str, end: bytes = b"\0") -> bytes:
    return b"".join(bytes((len(label),)) + label for label in name.encode("ascii").split(b".")) + end


def _fill(response: dns.message.Message, qname: dns.name.Name, rdtype: int, behaviour: Behaviour) -> None:
    kind = behaviour.kind
    if kind == "cname":
        target = behaviour.mx[0][1].rstrip(".") + "."
        response.answer.append(dns.rrset.from_text(qname, behaviour.ttl, "IN", "CNAME", target))
        response.answer.append(dns.rrset.from_text(target, behaviour.ttl, "IN", "MX", f"10 mx.{target}"))
        return
    if kind == "ptr":
        if rdtype == dns.rdatatype.PTR:
            names = [f"{name.rstrip('.')}." for _, name in behaviour.mx]
            response.answer.append(dns.rrset.from_text(qname, behaviour.ttl, "IN", "PTR", *names))
        else:
            response.authority.append(_soa(qname, behaviour.negative_ttl))
        return
    if kind in ("servfail", "refused"):
        response.set_rcode(dns.rcode.SERVFAIL if kind == "servfail" else dns.rcode.REFUSED)
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
    elif rdtype in (dns.rdatatype.A, dns.rdatatype.AAAA) and behaviour.addresses:
        family = "AAAA" if rdtype == dns.rdatatype.AAAA else "A"
        found = [a for a in behaviour.addresses if (":" in a) == (family == "AAAA")]
        if found:
            response.answer.append(dns.rrset.from_text(qname, behaviour.ttl, "IN", family, *found))
        else:
            response.authority.append(_soa(qname, behaviour.negative_ttl))
    elif rdtype == dns.rdatatype.A:
        response.answer.append(dns.rrset.from_text(qname, behaviour.ttl, "IN", "A", "192.0.2.10"))
    else:
        response.authority.append(_soa(qname, behaviour.negative_ttl))


def _soa(qname: dns.name.Name, ttl: int) -> dns.rrset.RRset:
    return dns.rrset.from_text(qname.parent() if len(qname) > 2 else qname, ttl, "IN", "SOA", ZONE_SOA)
