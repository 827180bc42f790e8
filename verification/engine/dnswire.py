"""The DNS wire format, as much of it as an MX lookup and an MX host's address lookup need (RFC 1035,
2308, 3596, 6891, 7505).

The resolver sends tens of thousands of queries for one bulk job; with dnspython's resolver
and message objects a query cost about 0.45 ms of CPU, with these plain functions and
BatchResolver about 0.03 ms (README, "Performance"). The tests check the decoder against
answers built with dnspython's message API.
"""

from __future__ import annotations

import array
import os
import socket
import struct
from dataclasses import dataclass, field

from verification.engine import frozen

MX = 15
A = 1
AAAA = 28
CNAME = 5
SOA = 6
OPT = 41
NOERROR = 0
NXDOMAIN = 3
# Largest UDP answer we ask for (EDNS0): the DNS flag day 2020 value, safe from fragmentation.
UDP_PAYLOAD = 1232

_HEADER = struct.Struct("!HHHHHH")
_RECORD = struct.Struct("!HHIH")  # type, class, ttl, rdata length
_PREFERENCE = struct.Struct("!H")
_MX_RECORD = struct.Struct("!HHIHH")  # a record's type, class, ttl and rdata length, then an MX's preference
_FLAG_QR = 0x8000
_FLAG_TC = 0x0200
_FLAG_RD = 0x0100
_MAX_POINTERS = 32


class WireError(ValueError):
    """A datagram that is not a well-formed DNS response."""


@dataclass(frozen=True, slots=True)
class Reply:
    qid: int
    rcode: int
    truncated: bool
    question: str  # lowercase, no trailing dot
    mx: tuple[tuple[int, str, int], ...] = ()  # (preference, exchange, ttl); "" is the root (null MX)
    negative_ttl: int | None = None  # min(SOA TTL, SOA MINIMUM) from the authority section
    cnames: dict[str, str] = field(default_factory=dict)
    addresses: tuple[str, ...] = ()  # the A or AAAA records of the question (CNAMEs followed)
    address_ttl: int | None = None  # the least TTL of those records, and of the CNAMEs leading to them


_reply = frozen.builder(Reply)


def query_id() -> int:
    """An unpredictable 16-bit query id (RFC 5452), from the system's random bytes read a few thousand
    ids at a time: one read a query was a tenth of a bulk query's CPU. List pops are atomic, so
    threads may share the pool."""
    try:
        return _QUERY_IDS.pop()
    except IndexError:
        _QUERY_IDS.extend(array.array("H", os.urandom(2 * _QUERY_IDS_AT_ONCE)))
        return _QUERY_IDS.pop()


_QUERY_IDS: list[int] = []
_QUERY_IDS_AT_ONCE = 4096


def encode_query(qid: int, domain: str, rdtype: int = MX) -> bytes:
    """A query (MX unless told) with recursion desired and an EDNS0 OPT record. `domain` is ASCII (IDNA)."""
    if len(domain) > 253:
        raise WireError(f"not a domain name: {domain!r}")
    labels = domain.rstrip(".").encode("ascii").split(b".")
    try:  # one byte of length before each label: a list and a join, cheaper than a bytearray grown label by label
        name = b"".join([_LENGTHS[len(label)] + label for label in labels])
    except IndexError:
        raise WireError(f"not a domain name: {domain!r}") from None
    if b"" in labels:
        raise WireError(f"not a domain name: {domain!r}")
    tail = _QUESTION_TAIL[rdtype] if rdtype in _QUESTION_TAIL else _question_tail(rdtype)
    return qid.to_bytes(2) + _QUERY_HEADER_AFTER_ID + name + tail


# A label's length as its byte, for the lengths a label may have (1-63; 0 is refused apart).
_LENGTHS = tuple(bytes((length,)) for length in range(64))
# A query's header after its id: flags (recursion desired), one question, no answer or authority, one OPT record.
_QUERY_HEADER_AFTER_ID = _HEADER.pack(0, _FLAG_RD, 1, 0, 0, 1)[2:]


def _question_tail(rdtype: int) -> bytes:
    """What follows the name: the end of the name, the type and class IN, then the OPT record."""
    return b"\0" + struct.pack("!HH", rdtype, 1) + b"\0" + struct.pack("!HHIH", OPT, UDP_PAYLOAD, 0, 0)


_QUESTION_TAIL = {rdtype: _question_tail(rdtype) for rdtype in (MX, A, AAAA)}


def tcp_frame(message: bytes) -> bytes:
    """A message as sent over TCP: after its length in two bytes (RFC 1035 4.2.2)."""
    return struct.pack("!H", len(message)) + message


def read_tcp_message(conn: socket.socket) -> bytes:
    """One length-prefixed message from a TCP connection. Raises OSError if it closes early."""
    (length,) = struct.unpack("!H", _read_exactly(conn, 2))
    return _read_exactly(conn, length)


def _read_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise OSError("connection closed mid-message")
        data += chunk
    return data


def decode_reply(wire: bytes) -> Reply:
    """The parts of an answer an MX or address lookup needs. Raises WireError on anything malformed."""
    try:
        return _decode(wire)
    except (struct.error, IndexError) as exc:
        raise WireError(f"truncated or malformed message: {exc}") from None


def _decode(wire: bytes) -> Reply:
    qid, flags, qdcount, ancount, nscount, _ = _HEADER.unpack_from(wire, 0)
    if not flags & _FLAG_QR or qdcount != 1:
        raise WireError("not an answer to one question")
    question, pos = read_name(wire, 12)
    plain = pos == 14 + len(question)  # the question's labels as they are, no pointer (nor any escaped byte)
    pos += 4
    if plain and not nscount and (records := _plain_mx(wire, pos, ancount, question)) is not None:
        return _reply(qid, flags & 0xF, bool(flags & _FLAG_TC), question, records, None, {}, (), None)
    mx: list[tuple[str, int, str, int]] = []
    addresses: list[tuple[str, str, int]] = []  # (owner, address, ttl)
    cnames: dict[str, str] = {}
    cname_ttls: dict[str, int] = {}
    negative_ttl: int | None = None
    for index in range(ancount + nscount):
        if wire[pos] == 0xC0 and wire[pos + 1] == 12:  # a pointer to the question's name, as most owners are
            owner, pos = question, pos + 2
        else:
            owner, pos = read_name(wire, pos)
        rtype, _, ttl, length = _RECORD.unpack_from(wire, pos)
        start = pos + _RECORD.size
        pos = start + length
        if pos > len(wire):
            raise WireError("record runs past the end of the message")
        if index < ancount and rtype == MX:
            exchange = _read_under_question(wire, start + 2, question) if plain else read_name(wire, start + 2)[0]
            mx.append((owner, _PREFERENCE.unpack_from(wire, start)[0], exchange, ttl))
        elif index < ancount and (rtype, length) in ((A, 4), (AAAA, 16)):
            family = socket.AF_INET if rtype == A else socket.AF_INET6
            addresses.append((owner, socket.inet_ntop(family, wire[start:pos]), ttl))
        elif index < ancount and rtype == CNAME:
            cnames[owner] = read_name(wire, start)[0]
            cname_ttls[owner] = ttl
        elif index >= ancount and rtype == SOA and negative_ttl is None:
            (minimum,) = struct.unpack_from("!I", wire, pos - 4)
            negative_ttl = min(ttl, minimum)
    chain = _chain(question, cnames) if cnames else [question]
    target = chain[-1]
    # Lists, then tuples: a generator costs more than the few records it walks (tens of thousands of replies a job).
    records = tuple([(preference, host, ttl) for owner, preference, host, ttl in mx if owner == target])
    found = [(address, ttl) for owner, address, ttl in addresses if owner == target]
    address_ttl = min([ttl for _, ttl in found] + [cname_ttls[name] for name in chain[:-1]]) if found else None
    return _reply(
        qid,
        flags & 0xF,
        bool(flags & _FLAG_TC),
        question,
        records,
        negative_ttl,
        cnames,
        tuple([address for address, _ in found]) if found else (),
        address_ttl,
    )


def _plain_mx(wire: bytes, pos: int, count: int, question: str) -> tuple[tuple[int, str, int], ...] | None:
    """The answer section's records as `_decode` reads them, for the usual MX answer: MX records
    alone, each owned by the question (a pointer to it); None for any other answer (read the
    general way). Tens of thousands of these a bulk job."""
    records = []
    end = len(wire)
    for _ in range(count):
        if wire[pos] != 0xC0 or wire[pos + 1] != 12 or pos + 2 + _MX_RECORD.size > end:
            return None
        rtype, _, ttl, length, preference = _MX_RECORD.unpack_from(wire, pos + 2)
        start = pos + 2 + _RECORD.size
        pos = start + length
        if rtype != MX or pos > end:
            return None
        records.append((preference, _read_under_question(wire, start + 2, question), ttl))
    return tuple(records)


def _follow(name: str, cnames: dict[str, str]) -> str:
    """The name a CNAME chain in the answer ends at (a loop stops where it repeats)."""
    return _chain(name, cnames)[-1]


def _chain(name: str, cnames: dict[str, str]) -> list[str]:
    """The names from `name` along the answer's CNAMEs, `name` first (a loop stops where it repeats)."""
    chain = [name]
    while name in cnames and cnames[name] not in chain:
        name = cnames[name]
        chain.append(name)
    return chain


def _read_under_question(wire: bytes, pos: int, question: str) -> str:
    """`read_name(wire, pos)[0]` for a reply whose question (at offset 12) was read plain: an MX host
    is most often a label or two and a pointer to the question, whose text is known already."""
    length = wire[pos]
    if 0 < length < 0x40 and wire[pos + 1 + length] == 0xC0 and wire[pos + 2 + length] == 12:  # one label, as mx1
        return wire[pos + 1 : pos + 1 + length].decode("ascii", "backslashreplace").lower() + "." + question
    labels: list[bytes] = []
    start = pos
    while (length := wire[pos]) and length < 0x40:
        labels.append(wire[pos + 1 : pos + 1 + length])
        pos += 1 + length
    if length != 0xC0 or wire[pos + 1] != 12:  # the root, another pointer or a bad label type: the general way
        return read_name(wire, start)[0]
    if not labels:
        return question
    return b".".join(labels).decode("ascii", "backslashreplace").lower() + "." + question


def read_name(wire: bytes, pos: int) -> tuple[str, int]:
    """A possibly compressed name at `pos`: (lowercase text without the final dot, end position)."""
    labels: list[bytes] = []
    end: int | None = None
    jumps = 0
    while (length := wire[pos]) != 0:
        if length & 0xC0 == 0xC0:  # a pointer to an earlier name
            jumps += 1
            if jumps > _MAX_POINTERS:
                raise WireError("too many compression pointers")
            end = pos + 2 if end is None else end
            pos = ((length & 0x3F) << 8) | wire[pos + 1]
        elif length & 0xC0:
            raise WireError("unknown label type")
        else:
            labels.append(wire[pos + 1 : pos + 1 + length])
            pos += 1 + length
    name = b".".join(labels).decode("ascii", "backslashreplace").lower()
    return name, pos + 1 if end is None else end
