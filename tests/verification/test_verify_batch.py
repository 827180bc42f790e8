"""POST /v1/verify/batch: up to 100 addresses, in order, one credit per distinct address, DNS together."""

from __future__ import annotations

import time
from typing import Any

import pytest

from billing.models import LedgerEntry
from tests.conftest import Persona, make_persona
from tests.support.dns_server import MX, DnsServer

MIXED = ["jane@good.com", "nope", "x@nowhere-at-all.com", "x@silent.com", "x@mailinator.com", "info@company.com"]


def batch(persona: Persona, emails: Any, **body: Any) -> Any:
    return persona.post_json("/v1/verify/batch", {"emails": emails, **body})


def balance(persona: Persona) -> int:
    persona.account.refresh_from_db()
    return persona.account.credit_balance


def verdict(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in {"cached", "response_time_ms"}}


def test_results_come_in_request_order(owner: Persona) -> None:
    response = batch(owner, ["B@Good.com ", "a@good.com", "nope"])
    assert response.status_code == 200
    assert [r["email"] for r in response.json()["data"]] == ["b@good.com", "a@good.com", "nope"]


def test_batch_verdicts_are_those_of_single_verify(owner: Persona, outsider: Persona) -> None:
    batched = batch(owner, MIXED).json()["data"]
    singles = [outsider.verify(email).json() for email in MIXED]
    assert [verdict(r) for r in batched] == [verdict(r) for r in singles]
    assert {r["status"] for r in batched} == {"valid", "invalid", "unknown", "risky"}


def test_each_distinct_address_costs_one_credit(owner: Persona) -> None:
    before = balance(owner)
    response = batch(owner, ["a@good.com", "b@good.com", "a@good.com", " A@GOOD.COM"])
    assert len(response.json()["data"]) == 4
    assert balance(owner) == before - 2
    assert response["X-Credits-Remaining"] == str(before - 2)


def test_a_duplicate_gets_the_same_answer_at_each_place(owner: Persona) -> None:
    first, _, again = batch(owner, ["a@good.com", "b@good.com", "a@good.com"]).json()["data"]
    assert first == again


def test_cached_addresses_are_flagged_and_still_charged(owner: Persona) -> None:
    owner.verify("a@good.com")
    before = balance(owner)
    cached, fresh = batch(owner, ["a@good.com", "b@good.com"]).json()["data"]
    assert (cached["cached"], fresh["cached"]) == (True, False)
    assert balance(owner) == before - 2
    assert owner.verify("b@good.com").json()["cached"] is True


def test_a_batch_the_balance_cannot_pay_whole_is_402_and_charges_nothing(db: None) -> None:
    two = make_persona(credits=2)
    response = batch(two, ["a@good.com", "b@good.com", "c@good.com"])
    assert response.status_code == 402
    assert response.json()["error"]["code"] == "insufficient_credits"
    assert balance(two) == 2
    assert not two.account.cached_verdicts.exists()
    assert not LedgerEntry.objects.filter(account=two.account, kind="spend").exists()


def test_a_batch_of_exactly_the_balance_is_paid(db: None) -> None:
    two = make_persona(credits=2)
    assert batch(two, ["a@good.com", "b@good.com", "a@good.com"]).status_code == 200
    assert balance(two) == 0


@pytest.mark.parametrize("emails", [[], "a@good.com", None, {"a": 1}, [f"u{i}@good.com" for i in range(101)]])
def test_an_empty_non_list_or_oversized_batch_is_400_on_emails(owner: Persona, emails: Any) -> None:
    before = balance(owner)
    response = batch(owner, emails)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"
    assert response.json()["error"]["param"] == "emails"
    assert balance(owner) == before


@pytest.mark.parametrize("emails", [["a@good.com", 5], ["a@good.com", None], ["x" * 1001]])
def test_a_bad_item_is_400_on_emails_and_nothing_is_charged(owner: Persona, emails: list[Any]) -> None:
    before = balance(owner)
    response = batch(owner, emails)
    assert (response.status_code, response.json()["error"]["param"]) == (400, "emails")
    assert balance(owner) == before


def test_a_missing_emails_field_is_400(owner: Persona) -> None:
    response = owner.post_json("/v1/verify/batch", {"email": "a@good.com"})
    assert (response.status_code, response.json()["error"]["param"]) == (400, "emails")


def test_a_full_batch_of_long_addresses_is_accepted(owner: Persona) -> None:
    emails = [f"{i}{'x' * 985}@good.com" for i in range(100)]
    response = batch(owner, emails)
    assert response.status_code == 200
    assert {r["sub_status"] for r in response.json()["data"]} == {"invalid_syntax"}


def test_deep_mode_is_refused_as_single_verify_refuses_it(owner: Persona) -> None:
    before = balance(owner)
    response = batch(owner, ["a@good.com"], validation_mode="deep")
    single = owner.post_json("/v1/verify", {"email": "a@good.com", "validation_mode": "deep"})
    assert response.status_code == single.status_code == 400
    assert response.json() == single.json()
    assert balance(owner) == before


def test_an_unknown_validation_mode_is_400(owner: Persona) -> None:
    response = batch(owner, ["a@good.com"], validation_mode="slow")
    assert (response.status_code, response.json()["error"]["param"]) == (400, "validation_mode")


def test_idempotency_key_replays_the_batch_without_charging(owner: Persona) -> None:
    first = owner.post_json("/v1/verify/batch", {"emails": ["a@good.com", "b@good.com"]}, **{"Idempotency-Key": "k1"})
    before = balance(owner)
    again = owner.post_json("/v1/verify/batch", {"emails": ["a@good.com", "b@good.com"]}, **{"Idempotency-Key": "k1"})
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert balance(owner) == before


def test_idempotency_key_with_another_batch_is_422(owner: Persona) -> None:
    owner.post_json("/v1/verify/batch", {"emails": ["a@good.com"]}, **{"Idempotency-Key": "k2"})
    other = owner.post_json("/v1/verify/batch", {"emails": ["b@good.com"]}, **{"Idempotency-Key": "k2"})
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"


def test_a_replay_of_the_batch_that_spent_the_last_credits_still_replays(db: None) -> None:
    two = make_persona(credits=2)
    body = {"emails": ["a@good.com", "b@good.com"]}
    assert two.post_json("/v1/verify/batch", body, **{"Idempotency-Key": "last"}).status_code == 200
    assert two.post_json("/v1/verify/batch", body, **{"Idempotency-Key": "last"}).status_code == 200


def test_a_batch_needs_an_api_key(db: None, client: Any) -> None:
    response = client.post("/v1/verify/batch", {"emails": ["a@good.com"]}, content_type="application/json")
    assert response.status_code == 401


def test_100_addresses_over_100_domains_at_50_ms_dns_answer_in_well_under_a_second(
    owner: Persona, dns_server: DnsServer
) -> None:
    # One after another this would take at least 100 x 50 ms = 5 s.
    domains = [f"batch{i}.com" for i in range(100)]
    for domain in domains:
        dns_server.set(domain, MX(f"mx.{domain}"))
    dns_server.delay = 0.05
    started = time.perf_counter()
    response = batch(owner, [f"someone@{domain}" for domain in domains])
    elapsed = time.perf_counter() - started
    assert response.status_code == 200
    assert {r["status"] for r in response.json()["data"]} == {"valid"}
    assert elapsed < 1.0
