"""docs/api.md and README, "Verify one address": credits, caching, idempotency, headers and errors
of POST /v1/verify."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import time_machine
from django.db.models import Sum
from django.utils import timezone

from billing.models import LedgerEntry
from tests.conftest import Persona, make_persona


def balance(persona: Persona) -> int:
    persona.account.refresh_from_db()
    return persona.account.credit_balance


# --- credits -------------------------------------------------------------------------------


def test_each_verification_costs_one_credit(owner: Persona) -> None:
    before = balance(owner)
    response = owner.verify("jane@good.com")
    assert balance(owner) == before - 1
    assert response["X-Credits-Remaining"] == str(before - 1)


@pytest.mark.parametrize("email", ["nope", "x@nowhere-at-all.com", "x@silent.com", "x@mailinator.com"])
def test_every_verdict_costs_one_credit(owner: Persona, email: str) -> None:
    before = balance(owner)
    assert owner.verify(email).status_code == 200
    assert balance(owner) == before - 1


def test_cached_verdict_still_costs_a_credit(owner: Persona) -> None:
    owner.verify("jane@good.com")
    before = balance(owner)
    assert owner.verify("jane@good.com").json()["cached"] is True
    assert balance(owner) == before - 1


def test_zero_balance_is_refused_with_402_and_nothing_recorded(db: None) -> None:
    broke = make_persona(credits=0)
    response = broke.verify("jane@good.com")
    assert response.status_code == 402
    assert response.json()["error"]["code"] == "insufficient_credits"
    assert response["X-Credits-Remaining"] == "0"
    assert not broke.account.cached_verdicts.exists()
    assert not LedgerEntry.objects.filter(account=broke.account, kind="spend").exists()


def test_last_credit_can_be_spent(db: None) -> None:
    one = make_persona(credits=1)
    assert one.verify("jane@good.com").status_code == 200
    assert one.verify("jane@good.com").status_code == 402


def test_ledger_sums_to_the_balance(owner: Persona) -> None:
    for email in ["a@good.com", "b@good.com", "a@good.com", "bad"]:
        owner.verify(email)
    total = LedgerEntry.objects.filter(account=owner.account).aggregate(s=Sum("amount"))["s"]
    assert total == balance(owner) == 1000 - 4


def test_errors_cost_nothing(owner: Persona) -> None:
    before = balance(owner)
    owner.post_json("/v1/verify", {"email": "x@good.com", "validation_mode": "deep"})
    owner.post_json("/v1/verify", "{not json")
    owner.post_json("/v1/verify", {})
    assert balance(owner) == before


# --- verdict cache ----------------------------------------------------------------------------


def test_an_address_with_a_nul_character_gets_a_verdict_not_an_error(owner: Persona) -> None:
    first, second = owner.verify("jane\x00@good.com"), owner.verify("jane\x00@good.com")
    assert [first.status_code, second.status_code] == [200, 200]
    assert (first.json()["email"], first.json()["sub_status"]) == ("jane\x00@good.com", "invalid_syntax")
    assert second.json()["cached"] is False  # never stored: PostgreSQL text cannot hold NUL
    owner.account.refresh_from_db()
    assert owner.account.credit_balance == 998


def test_second_lookup_is_served_from_cache_with_the_same_verdict(owner: Persona) -> None:
    first = owner.verify("jane@good.com").json()
    second = owner.verify("JANE@good.com ").json()
    assert (first["cached"], second["cached"]) == (False, True)
    strip = lambda body: {k: v for k, v in body.items() if k not in ("cached", "response_time_ms")}  # noqa: E731
    assert strip(first) == strip(second)


def test_cache_is_per_account(owner: Persona, outsider: Persona) -> None:
    owner.verify("jane@good.com")
    assert outsider.verify("jane@good.com").json()["cached"] is False


@pytest.mark.parametrize(
    ("email", "lifetime"),
    [
        ("jane@good.com", timedelta(hours=24)),  # valid
        ("x@mailinator.com", timedelta(hours=24)),  # risky
        ("x@nowhere-at-all.com", timedelta(hours=1)),  # invalid
        ("not-an-address", timedelta(hours=1)),  # invalid
    ],
)
def test_cache_lifetime_by_status(owner: Persona, email: str, lifetime: timedelta) -> None:
    with time_machine.travel(timezone.now(), tick=False) as clock:
        owner.verify(email)
        clock.shift(lifetime - timedelta(seconds=5))
        assert owner.verify(email).json()["cached"] is True
        clock.shift(timedelta(seconds=10))
        assert owner.verify(email).json()["cached"] is False


def test_unknown_is_never_cached(owner: Persona) -> None:
    owner.verify("x@silent.com")
    assert owner.verify("x@silent.com").json()["cached"] is False
    assert not owner.account.cached_verdicts.exists()


def test_unknown_turns_valid_once_dns_recovers(owner: Persona, dns_server) -> None:
    dns_server.set("flaky.com", dns_server.behaviour("servfail.com"))
    assert owner.verify("x@flaky.com").json()["status"] == "unknown"
    dns_server.set("flaky.com", dns_server.behaviour("good.com"))
    assert owner.verify("x@flaky.com").json()["status"] == "valid"


def test_domain_answers_are_shared_across_accounts(owner: Persona, outsider: Persona, dns_server) -> None:
    owner.verify("a@company.com")
    queries = dns_server.queries
    outsider.verify("b@company.com")
    assert dns_server.queries == queries


def test_domain_cache_honours_a_short_ttl_raised_to_the_minimum(owner: Persona, dns_server) -> None:
    from tests.support.dns_server import MX

    dns_server.set("shortttl.com", MX("mx.shortttl.com", ttl=5))
    with time_machine.travel(timezone.now(), tick=False) as clock:
        owner.verify("a@shortttl.com")
        queries = dns_server.queries
        clock.shift(timedelta(seconds=50))  # TTL 5 s is raised to the 60 s floor
        owner.verify("b@shortttl.com")
        assert dns_server.queries == queries
        clock.shift(timedelta(seconds=20))
        owner.verify("c@shortttl.com")
        assert dns_server.queries == queries + 1


def test_domain_cache_caps_a_long_ttl_at_six_hours(owner: Persona, dns_server) -> None:
    from tests.support.dns_server import MX

    dns_server.set("longttl.com", MX("mx.longttl.com", ttl=86400))
    with time_machine.travel(timezone.now(), tick=False) as clock:
        owner.verify("a@longttl.com")
        queries = dns_server.queries
        clock.shift(timedelta(hours=6, seconds=1))
        owner.verify("b@longttl.com")
        assert dns_server.queries == queries + 1


def test_nxdomain_and_no_mx_are_cached_but_failures_are_not(owner: Persona, dns_server) -> None:
    owner.verify("a@nowhere-at-all.com")
    owner.verify("a@aonly.com")
    owner.verify("a@servfail.com")
    queries = dns_server.queries
    owner.verify("b@nowhere-at-all.com")
    owner.verify("b@aonly.com")
    assert dns_server.queries == queries
    owner.verify("b@servfail.com")
    assert dns_server.queries > queries


# --- idempotency ----------------------------------------------------------------------------------


def test_idempotent_replay_is_byte_for_byte_and_free(owner: Persona) -> None:
    first = owner.verify("jane@good.com", **{"Idempotency-Key": "order-1"})
    before = balance(owner)
    again = owner.verify("jane@good.com", **{"Idempotency-Key": "order-1"})
    assert again.status_code == 200
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert balance(owner) == before
    assert "Idempotent-Replayed" not in first


def test_idempotency_key_with_another_body_is_422(owner: Persona) -> None:
    owner.verify("jane@good.com", **{"Idempotency-Key": "order-2"})
    response = owner.verify("john@good.com", **{"Idempotency-Key": "order-2"})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "idempotency_key_reused"


def test_idempotency_key_still_running_is_409(owner: Persona) -> None:
    from apikit.idempotency import claim

    body = json.dumps({"email": "jane@good.com"}, sort_keys=True).encode()
    import hashlib

    claim(account=owner.account, key="order-3", fingerprint=hashlib.sha256(body).hexdigest())
    response = owner.verify("jane@good.com", **{"Idempotency-Key": "order-3"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_key_in_use"


def test_idempotency_keys_are_per_account(owner: Persona, outsider: Persona) -> None:
    owner.verify("jane@good.com", **{"Idempotency-Key": "shared"})
    response = outsider.verify("john@good.com", **{"Idempotency-Key": "shared"})
    assert response.status_code == 200
    assert response.json()["email"] == "john@good.com"


def test_errors_are_not_stored_so_a_retry_after_402_succeeds(db: None) -> None:
    from billing.services import credits_grant

    persona = make_persona(credits=0)
    assert persona.verify("jane@good.com", **{"Idempotency-Key": "k"}).status_code == 402
    credits_grant(account=persona.account, amount=1)
    assert persona.verify("jane@good.com", **{"Idempotency-Key": "k"}).status_code == 200


def test_retry_of_the_request_that_spent_the_last_credit_still_replays(db: None) -> None:
    persona = make_persona(credits=1)
    first = persona.verify("jane@good.com", **{"Idempotency-Key": "last"})
    assert first.status_code == 200
    again = persona.verify("jane@good.com", **{"Idempotency-Key": "last"})
    assert again.status_code == 200
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert balance(persona) == 0


def test_idempotency_key_expires_after_24_hours(owner: Persona) -> None:
    with time_machine.travel(timezone.now(), tick=False) as clock:
        owner.verify("jane@good.com", **{"Idempotency-Key": "day"})
        clock.shift(timedelta(hours=24, seconds=1))
        response = owner.verify("john@good.com", **{"Idempotency-Key": "day"})
    assert response.status_code == 200
    assert "Idempotent-Replayed" not in response


@pytest.mark.parametrize("key", ["", "x" * 256, "naïve"])
def test_malformed_idempotency_key_is_400(owner: Persona, key: str) -> None:
    response = owner.client.post(
        "/v1/verify",
        data=json.dumps({"email": "jane@good.com"}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {owner.api_key}", "Idempotency-Key": key},
    )
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "Idempotency-Key"


# --- headers ----------------------------------------------------------------------------------------


def test_every_response_has_a_request_id(owner: Persona) -> None:
    ok = owner.verify("jane@good.com")
    error = owner.client.get("/v1/nowhere")
    assert ok["X-Request-Id"].startswith("req_") and error["X-Request-Id"].startswith("req_")
    assert ok["X-Request-Id"] != error["X-Request-Id"]


def test_sane_client_request_id_is_echoed(owner: Persona) -> None:
    assert owner.verify("jane@good.com", **{"X-Request-Id": "abc-123"})["X-Request-Id"] == "abc-123"


def test_insane_client_request_id_is_replaced(owner: Persona) -> None:
    response = owner.verify("jane@good.com", **{"X-Request-Id": "<script>" + "x" * 300})
    assert response["X-Request-Id"].startswith("req_")


def test_json_content_type_has_charset(owner: Persona) -> None:
    assert owner.verify("jane@good.com")["Content-Type"] == "application/json; charset=utf-8"
    assert owner.client.get("/v1/nowhere")["Content-Type"] == "application/json; charset=utf-8"
