"""The engine's cheaper paths (bench/README.md, "The engine per row") answer as the plain ones do:
the frozen dataclasses built without their __init__, the throwaway check of an MX host under its
own domain, the DNS query encoder."""

from __future__ import annotations

import contextlib
import dataclasses

import dns.message
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.examples import examples
from verification.engine import disposable, frozen, providers
from verification.engine.dns import DomainAnswer, DomainStatus
from verification.engine.dnswire import Reply, WireError, decode_reply, encode_query
from verification.engine.lists import parent_domains
from verification.engine.pacing import Pacer
from verification.engine.syntax import _fast_parts, _parse_with_email_validator, rough_parts
from verification.engine.verdict import Checks, DomainHalf, Status, Verdict, _verdict, plain_checks


@pytest.mark.parametrize(
    "made",
    [
        DomainAnswer("acme.com", DomainStatus.MX, 300, ("mx1.acme.com", "mx2.acme.com")),
        Reply(7, 0, False, "acme.com", ((10, "mx.acme.com", 60),), None, {}, (), None),
        DomainHalf(outcomes=((True,) * 7, (False,) * 7), suggestion="gmail.com", mail_provider="google"),  # type: ignore[arg-type]
    ],
    ids=["DomainAnswer", "Reply", "DomainHalf"],
)
def test_a_built_dataclass_is_the_dataclass_itself(made: object) -> None:
    values = [getattr(made, field.name) for field in dataclasses.fields(made)]  # type: ignore[arg-type]
    built = frozen.builder(type(made))(*values)
    assert type(built) is type(made)
    assert built == made
    assert repr(built) == repr(made)
    first = dataclasses.fields(made)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, first, values[0])


def test_a_replaced_verdict_and_checks_are_what_dataclasses_replace_makes() -> None:
    checks = plain_checks(True, True, True, False, False, True)
    fast = _verdict("ann@gmail.com", (True, Status.VALID, None, "fast", "high", 91, checks), None, "google")
    changed = {"status": Status.RISKY, "score": 40, "validation_mode": "deep", "checks": checks}
    for replaced, plain in [
        (frozen.replacer(Verdict)(fast, **changed), dataclasses.replace(fast, **changed)),  # type: ignore[arg-type]
        (frozen.replacer(Checks)(checks, smtp_valid=True), dataclasses.replace(checks, smtp_valid=True)),
    ]:
        assert (type(replaced), replaced, hash(replaced), repr(replaced)) == (
            type(plain),
            plain,
            hash(plain),
            repr(plain),
        )
    assert frozen.replacer(Verdict)(fast) == fast and fast.status is Status.VALID  # the original is left as it was
    with pytest.raises(dataclasses.FrozenInstanceError):
        frozen.replacer(Verdict)(fast).score = 0  # type: ignore[misc]


def test_a_verdict_built_slot_by_slot_equals_the_one_constructed() -> None:
    checks = plain_checks(True, True, True, False, False, True)
    outcome = (True, Status.VALID, None, "fast", "high", 91, checks)
    built = _verdict("ann@gmail.com", outcome, None, "google")
    made = Verdict(
        email="ann@gmail.com",
        is_valid=True,
        status=Status.VALID,
        sub_status=None,
        confidence="high",
        score=91,
        checks=checks,
        mail_provider="google",
    )
    assert (type(built), built, hash(built), built.to_dict()) == (Verdict, made, hash(made), made.to_dict())
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.score = 0  # type: ignore[misc]


def _whole_walk(domain: str, host: str) -> bool:
    """The throwaway check of one MX host as the lists say it, parent by parent, nothing skipped."""
    if domain in disposable.never_disposable():
        return False
    listed = disposable.disposable_domains()
    return (
        disposable.listed_in(domain, listed)
        or host in disposable.disposable_mx_hosts()
        or disposable.listed_in(host, listed)
    )


def _hosts_under_their_domains() -> list[tuple[str, str]]:
    """MX hosts under their own domain, the walk cut short at the domain: listed names of three
    labels or more (a listed name below the domain decides), never-throwaway ones, and plain ones."""
    listed = sorted(name for name in disposable.disposable_domains() if name.count(".") >= 2)[:300]
    never = sorted(name for name in disposable.never_disposable() if name.count(".") >= 2)[:100]
    pairs = []
    for name in [*listed, *never, "mail.acme-widgets.com", "a.b.c.example.org"]:
        labels = name.split(".")
        for cut in range(1, len(labels) - 1):  # each parent that still has a dot is the domain once
            pairs.append((".".join(labels[cut:]), f"mx.{name}"))
    return pairs


def test_an_mx_host_under_its_domain_is_judged_as_the_whole_walk_judges_it() -> None:
    pairs = _hosts_under_their_domains()
    assert len(pairs) > 300
    disposable.is_disposable.cache_clear()
    judged = {pair: disposable.is_disposable(pair[0], (pair[1],)) for pair in pairs}
    assert judged == {pair: _whole_walk(*pair) for pair in pairs}
    assert any(judged.values()) and not all(judged.values())  # both kinds are among them


_label = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=63)


@settings(max_examples=examples(300), deadline=None)
@given(
    labels=st.lists(_label, min_size=1, max_size=4), qid=st.integers(0, 65535), rdtype=st.sampled_from([15, 1, 28, 16])
)
def test_encoded_queries_read_back_as_asked(labels: list[str], qid: int, rdtype: int) -> None:
    name = ".".join(labels)
    if len(name) > 253:
        with pytest.raises(WireError):
            encode_query(qid, name, rdtype)
        return
    query = dns.message.from_wire(encode_query(qid, name, rdtype))
    assert (query.id, query.question[0].name.to_text(omit_final_dot=True), query.question[0].rdtype) == (
        qid,
        name,
        rdtype,
    )


@settings(max_examples=examples(300), deadline=None)
@given(
    qname=st.lists(_label.filter(lambda label: len(label) < 20), min_size=1, max_size=3).map(".".join),
    prefixes=st.lists(st.lists(st.sampled_from(["mx", "MX1", "a-b", "mail"]), max_size=2).map(".".join), max_size=4),
)
def test_mx_hosts_under_the_question_decode_as_dnspython_reads_them(qname: str, prefixes: list[str]) -> None:
    """The decoder's short way for an MX host that ends in a pointer to the question."""
    hosts = sorted({f"{prefix}.{qname}" if prefix else qname for prefix in prefixes})
    response = dns.message.make_response(dns.message.make_query(qname + ".", "MX"))
    if hosts:
        records = [f"{n} {host}." for n, host in enumerate(hosts)]
        response.answer.append(dns.rrset.from_text(qname + ".", 60, "IN", "MX", *records))
    wire = response.to_wire()  # dnspython compresses each host to its labels and a pointer to the question
    assert not hosts or wire.count(b"\xc0\x0c") > len(hosts)  # an MX host or more points at the question
    expected = dns.message.from_wire(wire)
    read = {
        (rr.preference, rr.exchange.to_text(omit_final_dot=True).lower()) for rrset in expected.answer for rr in rrset
    }
    assert {(preference, host) for preference, host, _ in decode_reply(wire).mx} == read


@pytest.mark.parametrize("name", ["", ".", "a..b.com", f"{'x' * 64}.com", "a." * 127 + "com"])
def test_names_a_query_cannot_carry_are_refused(name: str) -> None:
    with pytest.raises(WireError):
        encode_query(1, name)


@settings(max_examples=examples(300), deadline=None)
@given(
    rate=st.floats(50, 1e6),
    tokens=st.floats(0, 50),
    elapsed=st.floats(0, 0.05),
    wanted=st.integers(1, 300),
)
def test_a_window_of_tokens_taken_at_once_is_as_many_taken_one_by_one(
    rate: float, tokens: float, elapsed: float, wanted: int
) -> None:
    one_by_one, at_once = (Pacer(3.0, rate=rate, tokens=tokens, refilled=10.0) for _ in range(2))
    sent = 0
    while sent < wanted and one_by_one.may_send(10.0 + elapsed):
        sent += 1
    assert at_once.take(10.0 + elapsed, wanted) == sent
    assert at_once == one_by_one


_text = st.text(st.sampled_from('aZ0.@ "-_+\\()<>[]:,é。\t'), max_size=14)


@settings(max_examples=examples(2000), deadline=None)
@given(text=_text, domain=st.sampled_from(["", "@b.co", "@b", "@b.co.", "@xn--p1ai.com", "@é.com", "@[1.2.3.4]"]))
def test_what_the_syntax_refuses_without_email_validator_email_validator_refuses(text: str, domain: str) -> None:
    email = text + domain
    if _fast_parts(email) == ():
        assert _parse_with_email_validator(email) is None


@pytest.mark.parametrize(
    "email", ["user5.co1.com", "user5@", "user5@localhost", "user..5@co1.com", "user 5@co1.com", "user5@@co1.com"]
)
def test_a_lists_usual_broken_rows_are_refused_without_email_validator(email: str) -> None:
    assert _fast_parts(email) == () and _parse_with_email_validator(email) is None


def _provider_by_whole_walk(hosts: tuple[str, ...]) -> str | None:
    patterns = providers.host_patterns()
    for host in hosts:
        for suffix in parent_domains(host.rstrip(".").lower()):
            if suffix in patterns:
                return patterns[suffix]
    return None


def test_the_provider_of_mx_hosts_is_the_one_the_whole_walk_names() -> None:
    suffixes = sorted(providers.host_patterns())
    hosts = [
        *(f"mx.{suffix}" for suffix in suffixes),
        *(f"{suffix.split('.', 1)[-1]}" for suffix in suffixes),  # a parent of a pattern: not it
        *(f"a.b.{suffix}." for suffix in suffixes),
        *(f"X.{suffix.upper()}" for suffix in suffixes),
        "mx1.acme-widgets.com",
        "com",
        "",
        "mail.protection.outlook.com.evil.com",
    ]
    providers.mail_provider.cache_clear()
    named = {host: providers.mail_provider((host,)) for host in hosts}
    assert named == {host: _provider_by_whole_walk((host,)) for host in hosts}
    assert None in named.values() and len(set(named.values())) > 5
    pairs = list(zip(hosts, reversed(hosts), strict=True))
    assert [providers.mail_provider(pair) for pair in pairs] == [_provider_by_whole_walk(pair) for pair in pairs]


def _rough_parts_through_idna(email: str) -> tuple[str, str]:
    local, at, domain = email.rpartition("@")
    if not at:
        return "", ""
    with contextlib.suppress(UnicodeError):
        domain = domain.encode("idna").decode("ascii")
    return local, domain


@pytest.mark.parametrize(
    "email",
    ["a@B.Com", "a@b..com", "a@.com", "a@com.", "a@" + "x" * 64 + ".com", "a@x." + "y" * 64, "a@", "a@@b", "a@é.com"],
)
def test_an_unreadable_rows_parts_are_the_idna_codecs(email: str) -> None:
    assert rough_parts(email) == _rough_parts_through_idna(email)
