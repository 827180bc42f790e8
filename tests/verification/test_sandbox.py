"""Test keys (`ev_test_…`): the same shapes as live keys, from the sandbox: no credit, no DNS, fixed answers."""

from __future__ import annotations

from typing import Any

import pytest
from django.db.models import Sum

from apikit.models import IdempotencyRecord
from billing.models import LedgerEntry
from tests.conftest import Persona, sandboxed
from tests.support.dns_server import DnsServer
from verification.engine.sandbox import SANDBOX_ADDRESSES

# Every status and sub-status, the deep ones included (README, "Test keys").
SANDBOX = {
    "valid@sandbox.example": ("valid", None),
    "invalid@sandbox.example": ("invalid", "mailbox_not_found"),
    "no-mx@sandbox.example": ("invalid", "no_mx_record"),
    "disposable@sandbox.example": ("risky", "disposable"),
    "role@sandbox.example": ("risky", "role_based"),
    "unknown@sandbox.example": ("unknown", "dns_temporary_failure"),
    "disabled@sandbox.example": ("invalid", "mailbox_disabled"),
    "full@sandbox.example": ("risky", "mailbox_full"),
    "catchall@sandbox.example": ("risky", "catch_all"),
    "greylisted@sandbox.example": ("unknown", "greylisted"),
    "blocked@sandbox.example": ("unknown", "smtp_blocked"),
    "unreachable@sandbox.example": ("unknown", "smtp_unreachable"),
    "utf8@sandbox.example": ("unknown", "smtp_utf8_unsupported"),
    "failed@sandbox.example": ("unknown", "verification_failed"),
    "objected@sandbox.example": ("unknown", "address_objected"),
}


def balance(persona: Persona) -> int:
    persona.account.refresh_from_db()
    return persona.account.credit_balance


def test_a_test_key_looks_like_one(owner: Persona) -> None:
    assert sandboxed(owner).api_key.startswith("ev_test_") and len(sandboxed(owner).api_key) == 40


def test_the_documented_addresses_are_every_sandbox_address() -> None:
    assert set(SANDBOX) == set(SANDBOX_ADDRESSES)


@pytest.mark.parametrize(("email", "expected"), SANDBOX.items())
def test_sandbox_addresses_have_fixed_answers(owner: Persona, email: str, expected: tuple[str, Any]) -> None:
    body = sandboxed(owner).verify(email.upper()).json()
    assert (body["email"], body["status"], body["sub_status"]) == (email, *expected)
    assert body["is_valid"] is (expected[0] == "valid")


def test_every_status_and_sub_status_has_a_sandbox_address(client: Any) -> None:
    schema = client.get("/v1/openapi.json").json()["components"]["schemas"]
    sub_statuses = set(schema["SubStatusEnum"]["enum"]) - {"invalid_syntax"}  # any malformed address gives that
    assert {sub for _, sub in SANDBOX.values() if sub} == sub_statuses
    assert {status for status, _ in SANDBOX.values()} == {"valid", "invalid", "risky", "unknown"}


def test_a_test_key_answers_in_the_live_shape(owner: Persona) -> None:
    live = owner.verify("jane@good.com").json()
    test = sandboxed(owner).verify("valid@sandbox.example").json()
    assert list(test) == list(live) and list(test["checks"]) == list(live["checks"])


def test_a_test_key_spends_no_credit_and_caches_nothing(owner: Persona) -> None:
    sandbox = sandboxed(owner)
    before = balance(owner)
    responses = [sandbox.verify("valid@sandbox.example"), sandbox.verify("valid@sandbox.example")]
    sandbox.post_json("/v1/verify/batch", {"emails": ["a@good.com", "invalid@sandbox.example"]})
    assert balance(owner) == before
    assert [r["X-Credits-Remaining"] for r in responses] == [str(before)] * 2
    assert [r.json()["cached"] for r in responses] == [False, False]
    assert not owner.account.cached_verdicts.exists()
    assert not LedgerEntry.objects.filter(account=owner.account, kind="spend").exists()


def test_a_test_key_works_with_a_zero_balance(db: None) -> None:
    from tests.conftest import make_persona

    broke = make_persona(credits=0)
    assert sandboxed(broke).verify("valid@sandbox.example").status_code == 200
    assert broke.verify("valid@sandbox.example").status_code == 402


def test_a_test_key_never_asks_dns(owner: Persona, dns_server: DnsServer) -> None:
    before = dns_server.queries
    sandbox = sandboxed(owner)
    answers = [sandbox.verify(email).json() for email in ["x@nowhere-at-all.com", "x@silent.com", "info@good.com"]]
    assert dns_server.queries == before
    # Other addresses are judged without DNS: syntax and the lists, the domain taken to have mail.
    assert [(a["status"], a["sub_status"]) for a in answers] == [
        ("valid", None),
        ("valid", None),
        ("risky", "role_based"),
    ]


def test_other_addresses_are_judged_by_syntax(owner: Persona) -> None:
    body = sandboxed(owner).verify("not an address").json()
    assert (body["status"], body["sub_status"]) == ("invalid", "invalid_syntax")
    assert sandboxed(owner).verify("x@sandbox.example").json()["sub_status"] == "invalid_syntax"  # .example: reserved


def test_a_live_key_does_not_know_the_sandbox(owner: Persona) -> None:
    body = owner.verify("valid@sandbox.example").json()
    assert (body["status"], body["sub_status"]) == ("invalid", "invalid_syntax")


def test_a_test_batch_answers_in_order(owner: Persona) -> None:
    emails = list(SANDBOX)
    data = sandboxed(owner).post_json("/v1/verify/batch", {"emails": emails}).json()["data"]
    assert [(r["email"], r["status"], r["sub_status"]) for r in data] == [(e, *SANDBOX[e]) for e in emails]


def test_a_test_key_may_ask_for_deep_mode(owner: Persona) -> None:
    body = sandboxed(owner).post_json("/v1/verify", {"email": "catchall@sandbox.example", "validation_mode": "deep"})
    assert body.status_code == 200
    assert (body.json()["validation_mode"], body.json()["checks"]["is_catch_all"]) == ("deep", True)
    live = owner.post_json("/v1/verify", {"email": "catchall@sandbox.example", "validation_mode": "deep"})
    assert live.json()["error"]["code"] == "deep_mode_disabled"


def test_a_test_key_still_refuses_bad_input(owner: Persona) -> None:
    response = sandboxed(owner).post_json("/v1/verify/batch", {"emails": []})
    assert (response.status_code, response.json()["error"]["param"]) == (400, "emails")


def test_the_account_says_the_key_is_a_test_key(owner: Persona) -> None:
    sandbox = sandboxed(owner)
    key = sandbox.get("/v1/account").json()["key"]
    assert (key["mode"], key["prefix"]) == ("test", sandbox.api_key[:12])


def test_idempotency_keys_of_test_and_live_are_kept_apart(owner: Persona) -> None:
    body = {"email": "valid@sandbox.example"}
    test = sandboxed(owner).post_json("/v1/verify", body, **{"Idempotency-Key": "same"})
    live = owner.post_json("/v1/verify", body, **{"Idempotency-Key": "same"})
    assert "Idempotent-Replayed" not in live and live.json()["status"] == "invalid" != test.json()["status"]
    again = sandboxed(owner).post_json("/v1/verify", body, **{"Idempotency-Key": "same"})
    assert again["Idempotent-Replayed"] == "true" and again.content == test.content
    assert IdempotencyRecord.objects.filter(account=owner.account, key="same").count() == 2


def test_the_ledger_still_sums_to_the_balance(owner: Persona) -> None:
    sandboxed(owner).verify("valid@sandbox.example")
    owner.verify("a@good.com")
    total = LedgerEntry.objects.filter(account=owner.account).aggregate(s=Sum("amount"))["s"]
    assert total == balance(owner) == 999
