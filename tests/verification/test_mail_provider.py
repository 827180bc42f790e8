"""README, `mail_provider`: mail_provider, from the MX hosts of the domain's answer."""

from __future__ import annotations

import pytest
from django.urls import reverse

from jobs.result_rows import RESULT_COLUMNS, result_row
from tests.conftest import Persona
from tests.support.dns_server import MX, DnsServer
from tests.support.portal import logged_in
from verification.engine import verify_one
from verification.engine.dns import DomainAnswer, DomainStatus
from verification.engine.providers import PROVIDERS, mail_provider

# One real-looking MX host of every provider family.
EXAMPLES = {
    "google": "aspmx.l.google.com",
    "microsoft": "acme-com.mail.protection.outlook.com",
    "yahoo": "mta6.am0.yahoodns.net",
    "apple": "mx01.mail.icloud.com",
    "zoho": "mx.zoho.eu",
    "proton": "mail.protonmail.ch",
    "yandex": "mx.yandex.net",
    "mailru": "emx.mail.ru",
    "gmx": "mx00.emig.gmx.net",
    "fastmail": "in1-smtp.messagingengine.com",
    "amazon": "inbound-smtp.eu-west-1.amazonaws.com",
    "mimecast": "eu-smtp-inbound-1.mimecast.com",
    "proofpoint": "mx0a-001b2d01.pphosted.com",
    "barracuda": "d123456a.ess.barracudanetworks.com",
    "cisco": "mx1.hc1234-56.iphmx.com",
}


def test_every_provider_family_has_an_example() -> None:
    assert set(EXAMPLES) == set(PROVIDERS)


@pytest.mark.parametrize(("provider", "host"), EXAMPLES.items())
def test_mx_host_patterns_name_the_provider(provider: str, host: str) -> None:
    assert mail_provider((host,)) == provider
    assert mail_provider((host.upper() + ".",)) == provider


@pytest.mark.parametrize("host", ["mx.acme.com", "notgoogle.com", "google.com.evil.example", "outlook.com-mx.example"])
def test_unknown_or_look_alike_hosts_name_no_provider(host: str) -> None:
    assert mail_provider((host,)) is None


def test_the_first_host_a_pattern_names_wins() -> None:
    assert mail_provider(("mx.acme.com", "eu-smtp-inbound-1.mimecast.com", "aspmx.l.google.com")) == "mimecast"


@pytest.mark.parametrize(("provider", "host"), EXAMPLES.items())
def test_api_reports_the_mail_provider(owner: Persona, dns_server: DnsServer, provider: str, host: str) -> None:
    dns_server.set(f"{provider}-customer.com", MX(host))
    body = owner.verify(f"jane@{provider}-customer.com").json()
    assert (body["mail_provider"], body["status"]) == (provider, "valid")


def test_api_mail_provider_is_null_without_mx_or_known_host(owner: Persona) -> None:
    assert owner.verify("jane@good.com").json()["mail_provider"] is None
    assert owner.verify("jane@nowhere-at-all.com").json()["mail_provider"] is None


def test_cached_verdict_keeps_the_mail_provider(owner: Persona) -> None:
    owner.verify("jane@gmail.com")
    body = owner.verify("jane@gmail.com").json()
    assert (body["cached"], body["mail_provider"]) == (True, "google")


def test_portal_verdict_card_names_the_mail_provider(owner: Persona) -> None:
    page = logged_in(owner).post(reverse("verify"), {"email": "jane@gmail.com"}).content.decode()
    assert '<div data-mail-provider="google"><dt>Mail provider</dt><dd>Google (Gmail, Workspace)</dd></div>' in page


def test_result_file_has_the_mail_provider_after_did_you_mean() -> None:
    answer = DomainAnswer("acme.com", DomainStatus.MX, 3600, ("acme-com.mail.protection.outlook.com",))
    verdict = verify_one("jane@acme.com", lambda domains, **_: {"acme.com": answer})
    row = dict(zip(RESULT_COLUMNS, result_row(verdict), strict=True))
    assert RESULT_COLUMNS[RESULT_COLUMNS.index("did_you_mean") + 1] == "mail_provider"
    assert row["mail_provider"] == "microsoft"
