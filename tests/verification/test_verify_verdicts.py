"""README, the verdict table: the verdict table, row by row, through POST /v1/verify."""

from __future__ import annotations

import pytest

from tests.conftest import Persona
from tests.support.dns_server import MX, DnsServer

VERDICT_FIELDS = ("status", "sub_status", "is_valid", "confidence", "score")


def verdict(body: dict) -> tuple:
    return tuple(body[field] for field in VERDICT_FIELDS)


@pytest.mark.parametrize(
    ("email", "expected"),
    [
        ("not-an-address", ("invalid", "invalid_syntax", False, "high", 0)),
        ("", ("invalid", "invalid_syntax", False, "high", 0)),
        ("   ", ("invalid", "invalid_syntax", False, "high", 0)),
        ("someone@silent.com", ("unknown", "dns_temporary_failure", False, "low", 30)),
        ("someone@servfail.com", ("unknown", "dns_temporary_failure", False, "low", 30)),
        ("someone@nowhere-at-all.com", ("invalid", "no_mx_record", False, "high", 0)),
        ("someone@aonly.com", ("invalid", "no_mx_record", False, "high", 0)),
        ("someone@nullmx.com", ("invalid", "no_mx_record", False, "high", 0)),
        ("someone@mailinator.com", ("risky", "disposable", False, "high", 10)),
        (
            "info@good.com",
            ("risky", "role_based", False, "medium", 63),
        ),  # the `other` family's role score (engine/scores.py)
        ("jane@good.com", ("valid", None, True, "high", 85)),
    ],
)
def test_verdict_table_row(owner: Persona, email: str, expected: tuple) -> None:
    response = owner.verify(email)
    assert response.status_code == 200
    assert verdict(response.json()) == expected


def test_syntax_rule_wins_over_everything(owner: Persona) -> None:
    body = owner.verify("info@@mailinator.com").json()
    assert (body["status"], body["sub_status"]) == ("invalid", "invalid_syntax")
    assert body["checks"]["syntax_valid"] is False


@pytest.mark.parametrize(
    ("email", "sub_status", "also_true"),
    [
        pytest.param("info@silent.com", "dns_temporary_failure", "is_role_based", id="dns_failure_wins_over_role"),
        # 10minutemail.com is on the disposable list but not in the loopback zone: NXDOMAIN.
        pytest.param("someone@10minutemail.com", "no_mx_record", "is_disposable", id="no_mx_wins_over_disposable"),
        pytest.param("admin@mailinator.com", "disposable", "is_role_based", id="disposable_wins_over_role"),
    ],
)
def test_the_earlier_rule_wins_and_the_later_check_still_shows(
    owner: Persona, email: str, sub_status: str, also_true: str
) -> None:
    body = owner.verify(email).json()
    assert body["sub_status"] == sub_status
    assert body["checks"][also_true] is True


def test_subdomain_of_disposable_domain_is_disposable(owner: Persona) -> None:
    assert owner.verify("x@sub.mailinator.com").json()["sub_status"] == "disposable"


def test_role_ignores_plus_tag(owner: Persona) -> None:
    assert owner.verify("support+billing@good.com").json()["sub_status"] == "role_based"


def test_plus_tag_on_a_person_is_valid(owner: Persona) -> None:
    assert owner.verify("jane+news@good.com").json()["status"] == "valid"


def test_valid_result_has_every_field_of_the_spec(owner: Persona) -> None:
    body = owner.verify("jane@good.com").json()
    assert body == {
        "email": "jane@good.com",
        "is_valid": True,
        "status": "valid",
        "sub_status": None,
        "validation_mode": "fast",
        "confidence": "high",
        "score": 85,
        "checks": {
            "syntax_valid": True,
            "domain_valid": True,
            "mx_found": True,
            "smtp_valid": None,
            "is_disposable": False,
            "is_role_based": False,
            "is_catch_all": None,
            "is_free_provider": False,
        },
        "did_you_mean": None,
        "mail_provider": None,
        "feedback": None,
        "deliverability": None,
        "cached": False,
        "response_time_ms": body["response_time_ms"],
    }
    assert isinstance(body["response_time_ms"], int) and body["response_time_ms"] >= 1


@pytest.mark.parametrize(
    ("email", "domain_valid", "mx_found"),
    [
        ("x@nowhere-at-all.com", False, False),  # NXDOMAIN
        ("x@aonly.com", True, False),  # exists, no MX
        ("x@nullmx.com", True, False),  # exists, null MX only
        ("x@silent.com", False, False),  # rule 2: unknown
        ("x@", False, False),  # rule 1
        ("x@good.com", True, True),
    ],
)
def test_domain_and_mx_checks(owner: Persona, email: str, domain_valid: bool, mx_found: bool) -> None:
    checks = owner.verify(email).json()["checks"]
    assert (checks["domain_valid"], checks["mx_found"]) == (domain_valid, mx_found)


def test_list_checks_are_computed_even_when_syntax_decides(owner: Persona) -> None:
    checks = owner.verify("info@gmail..com").json()["checks"]
    assert checks["syntax_valid"] is False
    assert checks["is_role_based"] is True


def test_free_provider_is_flagged_but_still_valid(owner: Persona) -> None:
    body = owner.verify("someone@gmail.com").json()
    assert body["status"] == "valid"
    assert body["checks"]["is_free_provider"] is True


def test_smtp_and_catch_all_are_null_in_fast_mode(owner: Persona) -> None:
    checks = owner.verify("jane@good.com").json()["checks"]
    assert checks["smtp_valid"] is None and checks["is_catch_all"] is None


def test_address_is_trimmed_and_lowercased(owner: Persona) -> None:
    assert owner.verify("  Jane.Doe@GOOD.com\t").json()["email"] == "jane.doe@good.com"


def test_international_domain_is_looked_up_in_idna_form(owner: Persona) -> None:
    body = owner.verify("Jörg@MÜNCHEN.de").json()
    assert body["email"] == "jörg@münchen.de"
    assert body["status"] == "valid"


@pytest.mark.parametrize(
    "email",
    [
        "user@localhost",
        "user@printer.local",
        "user@site.test",
        "user@nothing.invalid",
        "user@shop.example",
        "x@corp.internal",
        "x@printer.alt",
        "x@nas.home.arpa",
        "x@site.onion",
        "x@app.localhost",
        "user@[192.0.2.1]",
        "user@192.0.2.1",
        "a..b@good.com",
        ("x" * 65) + "@good.com",
        "user@" + ("a" * 64) + ".com",
        "user@-good.com",
    ],
)
def test_reserved_names_and_malformed_addresses_are_invalid_syntax(owner: Persona, email: str) -> None:
    assert owner.verify(email).json()["sub_status"] == "invalid_syntax"


@pytest.mark.parametrize("domain", ["corp.internal", "printer.alt", "nas.home.arpa", "site.onion", "app.localhost"])
def test_special_use_names_are_never_asked_of_dns_even_where_it_would_answer(
    owner: Persona, dns_server: DnsServer, domain: str
) -> None:
    dns_server.set(domain, MX(f"mx.{domain}"))  # a resolver that answers for them (split horizon, say)
    asked = dns_server.queries
    body = owner.verify(f"x@{domain}").json()
    assert (body["status"], body["sub_status"], dns_server.queries) == ("invalid", "invalid_syntax", asked)


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [
        ("jane@gmial.com", "jane@gmail.com"),
        ("jane@hotmial.com", "jane@hotmail.com"),
        ("jane@outlok.com", "jane@outlook.com"),
        ("jane@yahoo.con", "jane@yahoo.com"),
        ("jane@gmail.co", "jane@gmail.com"),
    ],
)
def test_did_you_mean_suggests_the_provider(owner: Persona, typed: str, suggested: str) -> None:
    assert owner.verify(typed).json()["did_you_mean"] == suggested


@pytest.mark.parametrize("email", ["jane@gmail.com", "jane@good.com", "jane@ymail.com"])
def test_did_you_mean_is_null_for_real_providers_and_other_domains(owner: Persona, email: str) -> None:
    assert owner.verify(email).json()["did_you_mean"] is None


def test_did_you_mean_does_not_change_the_verdict(owner: Persona) -> None:
    body = owner.verify("jane@gmsil.com").json()  # gmsil.com has MX on the loopback zone
    assert (body["status"], body["did_you_mean"]) == ("valid", "jane@gmail.com")
