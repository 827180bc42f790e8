"""docs/lists.md: throwaway domains by name and by MX host; free providers never."""

from __future__ import annotations

from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from bench.disposable_coverage import Judge, coverage, false_throwaway, legitimate_domains
from tests.conftest import Persona
from tests.support.dns_server import MX, DnsServer
from verification.engine import disposable


@pytest.fixture(autouse=True)
def _patient_resolver(settings: Any, _resolver_on_loopback: DnsServer) -> None:
    """Every name these cases ask has an answer: on a loaded machine it may come after the suite's
    0.3 s (and be judged `unknown`), never wrong. A longer wait costs nothing when answers are prompt."""
    settings.VERIFIER_DNS_TIMEOUT, settings.VERIFIER_DNS_LIFETIME = 2.0, 6.0


def test_no_legitimate_domain_is_throwaway_by_name_or_as_an_mx_host() -> None:
    domains = legitimate_domains()
    assert len(domains) >= 550
    assert [d for d in domains if disposable.is_disposable(d)] == []
    assert [d for d in domains if disposable.is_disposable("acme-widgets.com", (f"mx1.{d}",))] == []


@pytest.mark.parametrize(
    "domain", ["tempmail.com", "temp-mail.io", "burnermail.io", "33mail.com", "mailinator.com", "guerrillamail.com"]
)
def test_the_merged_list_knows_the_usual_throwaway_services(domain: str) -> None:
    assert disposable.is_disposable(domain)


@pytest.mark.parametrize("domain", ["21cn.com", "sify.com", "sohu.com"])
def test_a_free_provider_is_never_throwaway_whatever_a_source_says(domain: str) -> None:
    assert not disposable.is_disposable(domain)
    assert not disposable.is_disposable("x.com", (f"mx.{domain}",))


def test_an_mx_host_under_a_throwaway_domain_makes_the_domain_throwaway() -> None:
    assert disposable.is_disposable("brand-new-burner.com", ("mx7.33mail.com",))
    assert disposable.is_disposable("brand-new-burner.com", ("MAIL.MAILINATOR.COM.",))
    assert not disposable.is_disposable("brand-new-burner.com", ("mx.brand-new-burner.com",))


@pytest.mark.parametrize("domain", ["acme.net.ua", "shop.nom.za", "budi.my.id"])
def test_a_registrant_under_a_listed_public_suffix_is_not_throwaway(domain: str) -> None:
    assert not disposable.is_disposable(domain)


def test_coverage_of_a_consensus_counts_what_is_flagged() -> None:
    size, share = coverage({"mailinator.com", "not-a-burner.org", "only-a.com"}, {"mailinator.com", "not-a-burner.org"})
    assert (size, share) == (2, 0.5)


def test_coverage_can_judge_by_another_list_held_out_sources_and_all() -> None:
    judge = Judge(frozenset({"not-a-burner.org", "gmail.com"}))
    assert coverage({"mailinator.com", "not-a-burner.org"}, {"mailinator.com", "not-a-burner.org"}, judge) == (2, 0.5)
    assert not judge("gmail.com") and judge("x.com", "mx.not-a-burner.org")


def test_false_throwaway_counts_legitimate_domains_flagged_by_name_or_as_mx_host() -> None:
    assert false_throwaway(Judge()) == []
    assert false_throwaway(Judge(frozenset({"siemens.com", "forwardemail.net"}))) == ["siemens.com"]


def test_refresh_merges_the_package_and_files_and_records_provenance(tmp_path: Path) -> None:
    source = tmp_path / "burners.txt"
    source.write_text("# a list\nfresh-burner.example.org\nSify.com\n21cn.com\n", encoding="utf-8")
    output = tmp_path / "out.txt"
    out = StringIO()
    call_command(
        "refresh_disposable_domains",
        str(source),
        "--url",
        "https://lists.example/b",
        "--output",
        str(output),
        stdout=out,
    )
    text = output.read_text(encoding="utf-8")
    entries = {line for line in text.splitlines() if not line.startswith("#")}
    assert {"fresh-burner.example.org", "mailinator.com"} <= entries
    assert not {"sify.com", "21cn.com"} & entries
    assert "#   burners.txt (https://lists.example/b): 3 domains" in text
    assert "disposable-email-domains" in text and f"# Domains: {len(entries)}" in text
    assert "tempmail.com" in entries and "#   disposable_additions.txt (reviewed by hand" in text


@pytest.mark.parametrize(
    ("domain", "mx_host"),
    [
        ("new-burner-1.com", "mail.mailinator.com"),
        ("new-burner-2.com", "mx2.33mail.com"),
        ("tempy.net", "in.temp-mail.io"),
    ],
)
def test_api_judges_a_domain_served_by_a_throwaway_mail_server_disposable(
    owner: Persona, dns_server: DnsServer, domain: str, mx_host: str
) -> None:
    dns_server.set(domain, MX(mx_host))
    body = owner.verify(f"jane@{domain}").json()
    assert (body["sub_status"], body["checks"]["is_disposable"]) == ("disposable", True)


@pytest.mark.parametrize("domain", ["21cn.com", "sify.com"])
def test_api_never_judges_a_free_provider_disposable(owner: Persona, dns_server: DnsServer, domain: str) -> None:
    dns_server.set(domain, MX(f"mx.{domain}"))
    body = owner.verify(f"jane@{domain}").json()
    assert (body["status"], body["checks"]["is_disposable"], body["checks"]["is_free_provider"]) == (
        "valid",
        False,
        True,
    )


@pytest.mark.parametrize("domain", ["tempmail.com", "temp-mail.io", "burnermail.io", "33mail.com"])
def test_api_judges_the_listed_throwaway_services_disposable(
    owner: Persona, dns_server: DnsServer, domain: str
) -> None:
    dns_server.set(domain, MX(f"mx.{domain}"))
    assert owner.verify(f"jane@{domain}").json()["sub_status"] == "disposable"


def test_api_judges_a_company_on_yandex_mail_hosting_valid(owner: Persona, dns_server: DnsServer) -> None:
    dns_server.set("acme-widgets.com", MX("mx.yandex.net"))
    assert owner.verify("jane@acme-widgets.com").json()["status"] == "valid"


def test_api_judges_by_the_cached_mx_hosts_without_asking_dns_again(owner: Persona, dns_server: DnsServer) -> None:
    dns_server.set("fresh-burner.net", MX("mx.fresh-burner.net", "mail2.mailinator.com"))
    assert owner.verify("ann@fresh-burner.net").json()["sub_status"] == "disposable"
    asked = dns_server.queries
    body = owner.verify("bob@fresh-burner.net").json()  # another address: the domain cache answers
    assert (body["sub_status"], body["cached"], dns_server.queries) == ("disposable", False, asked)
