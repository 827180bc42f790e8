"""The pure engine: syntax, lists, DNS answers. No Django, no database."""

from __future__ import annotations

import asyncio
import string

import pytest
from email_validator import EmailNotValidError, validate_email
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.dns_server import MX, NULL_MX, DnsServer
from verification.engine import DomainStatus, ResolverConfig, lists, lookup_domains, verify_many
from verification.engine.dns import make_resolver, resolve_domains
from verification.engine.syntax import _parse_with_email_validator, parse

# --- syntax --------------------------------------------------------------------------------

_local_chars = string.ascii_lowercase + string.digits + "._+-!#$%&'*/=?^`{|}~"
_domain_chars = string.ascii_lowercase + string.digits + "-."


@settings(max_examples=3000, deadline=None)
@given(
    local=st.text(_local_chars, min_size=0, max_size=70),
    domain=st.text(_domain_chars, min_size=0, max_size=40),
    tld=st.sampled_from(["com", "de", "co.uk", "io", "x", "1", "local", "test", "example", "arpa", "xn--p1ai", ""]),
)
def test_fast_path_agrees_with_email_validator(local: str, domain: str, tld: str) -> None:
    email = f"{local}@{domain}.{tld}" if tld else f"{local}@{domain}"
    assert parse(email) == _parse_with_email_validator(email)


def test_email_validator_accepts_the_fast_path_shapes() -> None:
    for email in ["a@b.co", "first.last+tag@sub.domain.co.uk", "o'neil@company.com", "x_y-z@a-b.io"]:
        validate_email(email, check_deliverability=False)
        assert parse(email) is not None


@pytest.mark.parametrize("email", ["a@b", "a@.com", "@b.com", "a@b..com", "a b@c.com", "a@b.c_m"])
def test_broken_shapes_are_refused(email: str) -> None:
    assert parse(email) is None
    with pytest.raises(EmailNotValidError):
        validate_email(email, check_deliverability=False)


def test_length_limits_are_64_and_254() -> None:
    assert parse("x" * 64 + "@good.com") is not None
    assert parse("x" * 65 + "@good.com") is None
    long_domain = ".".join(["a" * 60] * 4) + ".com"  # 247 characters
    assert len("x" * 6 + "@" + long_domain) == 254
    assert parse("x" * 6 + "@" + long_domain) is not None
    assert parse("x" * 7 + "@" + long_domain) is None


# --- lists -----------------------------------------------------------------------------------------


def test_lists_are_big_enough_to_be_useful() -> None:
    assert len(lists.free_providers()) >= 300
    assert len(lists.role_local_parts()) >= 60
    assert {"gmail.com", "outlook.com", "yahoo.co.uk", "mail.ru", "qq.com"} <= lists.free_providers()
    assert {"info", "admin", "support", "sales", "postmaster", "noreply"} <= lists.role_local_parts()


def test_list_files_are_clean() -> None:
    for name in ["free_providers.txt", "role_local_parts.txt", "typo_targets.txt"]:
        entries = [
            line for line in (lists.DATA_DIR / name).read_text().splitlines() if line and not line.startswith("#")
        ]
        assert entries == sorted(set(entries)) or name == "typo_targets.txt"
        assert all(entry == entry.strip().lower() for entry in entries)


def test_typo_targets_are_all_free_providers() -> None:
    assert lists.read_list("typo_targets.txt") <= lists.free_providers()


def test_no_free_provider_is_suggested_as_a_typo_of_another() -> None:
    assert all(lists.suggest_domain(domain) is None for domain in lists.free_providers())


@pytest.mark.parametrize("domain", ["mi.com", "ao.com", "good.com", "gmail.com", "gmx.org"])
def test_no_suggestion_for_short_or_unrelated_domains(domain: str) -> None:
    assert lists.suggest_domain(domain) is None


def test_disposable_parent_domain_counts() -> None:
    assert lists.is_disposable("mailinator.com")
    assert lists.is_disposable("a.b.mailinator.com")
    assert not lists.is_disposable("good.com")


# --- DNS answers --------------------------------------------------------------------------------------


@pytest.fixture
def resolve(dns_server: DnsServer):
    config = ResolverConfig(nameservers=(dns_server.address,), timeout=0.3, lifetime=0.3)
    resolver = make_resolver(config)
    return lambda *domains: asyncio.run(resolve_domains(domains, resolver=resolver, config=config))


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
    from tests.support.dns_server import Behaviour

    dns_server.set("mixed.com", Behaviour("mx", ((0, "."), (10, "mx.mixed.com"))))
    answer = resolve("mixed.com")["mixed.com"]
    assert (answer.status, answer.mx_hosts) == (DomainStatus.MX, ("mx.mixed.com",))


def test_negative_ttl_comes_from_the_soa(resolve) -> None:
    assert resolve("nowhere-at-all.com")["nowhere-at-all.com"].ttl == 300


def test_failures_are_not_cacheable(resolve) -> None:
    assert not resolve("servfail.com")["servfail.com"].cacheable
    assert resolve("nullmx.com")["nullmx.com"].cacheable


def test_many_domains_resolve_concurrently(dns_server: DnsServer) -> None:
    dns_server.delay = 0.05
    dns_server.default = lambda name: MX("mx." + name)
    config = ResolverConfig(nameservers=(dns_server.address,), timeout=2, lifetime=2)
    import time

    started = time.perf_counter()
    answers = asyncio.run(
        resolve_domains([f"d{i}.com" for i in range(200)], resolver=make_resolver(config), config=config)
    )
    elapsed = time.perf_counter() - started
    dns_server.default = lambda name: __import__("tests.support.dns_server", fromlist=["NXDOMAIN"]).NXDOMAIN
    assert len(answers) == 200 and all(a.mx_found for a in answers.values())
    assert elapsed < 2.0  # 200 x 50 ms one after another would take 10 s


class DictCache:
    def __init__(self) -> None:
        self.data: dict = {}

    def get_many(self, domains):
        return {d: self.data[d] for d in domains if d in self.data}

    def put_many(self, answers):
        self.data.update({a.domain: a for a in answers})


def test_verify_many_looks_each_domain_up_once_and_keeps_order(dns_server: DnsServer) -> None:
    config = ResolverConfig(nameservers=(dns_server.address,), timeout=0.3, lifetime=0.3)
    cache = DictCache()
    resolver = make_resolver(config)
    before = dns_server.queries
    verdicts = verify_many(
        ["b@good.com", "A@Good.com", "bad", "x@nullmx.com", "y@servfail.com"],
        lambda domains: lookup_domains(domains, cache=cache, resolver=resolver, config=config),
    )
    assert [v.email for v in verdicts] == ["b@good.com", "a@good.com", "bad", "x@nullmx.com", "y@servfail.com"]
    assert [v.status for v in verdicts] == ["valid", "valid", "invalid", "invalid", "unknown"]
    assert set(cache.data) == {"good.com", "nullmx.com"}  # the failure was not cached
    assert dns_server.queries - before == 3
    dns_server.set("nullmx.com", NULL_MX)


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
    resolver = make_resolver(ResolverConfig(nameservers=(spec,)))
    (nameserver,) = resolver.nameservers
    assert (nameserver.address, nameserver.port) == (address, port)


def test_timeout_and_lifetime_come_from_the_config() -> None:
    resolver = make_resolver(ResolverConfig(nameservers=("127.0.0.1",), timeout=1.5, lifetime=4.0))
    assert (resolver.timeout, resolver.lifetime) == (1.5, 4.0)
