"""The DNS wire format (verification/engine/dnswire.py) checked against dnspython's: queries, answers,
garbage and compression loops."""

from __future__ import annotations

import contextlib
import ipaddress

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.rrset
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.dns_server import MX, Behaviour
from tests.support.examples import examples
from verification.engine.dnswire import WireError, decode_reply, encode_query

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
