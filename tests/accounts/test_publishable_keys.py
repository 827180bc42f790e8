"""docs/widget.md: publishable keys verify one address at a time, from their allowed origins only,
with CORS for those origins, no balance shown, and a per end-user address limit."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from accounts.keys import key_create
from tests.conftest import Persona, make_persona
from tests.support.db import committed_db

SHOP = "https://shop.example.com"


@pytest.fixture
def page(owner: Persona) -> Persona:
    """The owner, calling with a publishable key as the shop's page would."""
    owner.api_key = key_create(
        account=owner.account,
        created_by=owner.account.owner,
        kind="publishable",
        allowed_origins=[SHOP, "https://*.example.org"],
    )[1]
    return owner


def balance(persona: Persona) -> int:
    persona.account.refresh_from_db()
    return persona.account.credit_balance


def refusal(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def test_an_allowed_origin_gets_the_verdict_with_cors_and_no_balance(page: Persona) -> None:
    response = page.verify("jane@gmial.com", Origin=SHOP)
    assert response.status_code == 200
    assert response.json()["did_you_mean"] == "jane@gmail.com"
    assert response["Access-Control-Allow-Origin"] == SHOP
    assert "Origin" in response["Vary"]
    assert "X-Credits-Remaining" not in response and "Access-Control-Allow-Credentials" not in response
    assert balance(page) == 999


@pytest.mark.parametrize("origin", ["https://evil.example.com", "http://shop.example.com", "https://a.b.example.org"])
def test_another_origin_is_refused_and_charged_nothing(page: Persona, origin: str) -> None:
    response = page.verify("jane@good.com", Origin=origin)
    assert refusal(response) == (403, "key_not_permitted")
    assert "Access-Control-Allow-Origin" not in response
    assert balance(page) == 1000


def test_one_subdomain_of_a_wildcard_origin_is_allowed(page: Persona) -> None:
    assert page.verify("jane@good.com", Origin="https://www.example.org").status_code == 200


def test_a_request_without_origin_is_refused(page: Persona) -> None:
    assert refusal(page.verify("jane@good.com")) == (403, "key_not_permitted")


@pytest.mark.parametrize(
    ("method", "path"), [("post", "/v1/verify/batch"), ("get", "/v1/account"), ("get", "/v1/jobs")]
)
def test_a_publishable_key_does_nothing_but_verify_one_address(page: Persona, method: str, path: str) -> None:
    headers = page.auth({"Origin": SHOP})
    if method == "post":
        response = page.client.post(path, {"emails": ["a@good.com"]}, content_type="application/json", headers=headers)
    else:
        response = page.client.get(path, headers=headers)
    assert refusal(response) == (403, "key_not_permitted")
    assert balance(page) == 1000


def test_a_preflight_from_an_allowed_origin_is_answered(page: Persona) -> None:
    response = page.client.options(
        "/v1/verify", headers={"Origin": SHOP, "Access-Control-Request-Method": "POST",
                               "Access-Control-Request-Headers": "authorization, content-type"},
    )  # fmt: skip
    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == SHOP
    assert response["Access-Control-Allow-Methods"] == "POST"
    assert response["Access-Control-Allow-Headers"] == "Authorization, Content-Type, Idempotency-Key"
    assert int(response["Access-Control-Max-Age"]) > 0
    assert "Access-Control-Allow-Credentials" not in response


def test_a_preflight_from_an_unknown_origin_is_refused(page: Persona) -> None:
    response = page.client.options(
        "/v1/verify", headers={"Origin": "https://evil.example.com", "Access-Control-Request-Method": "POST"}
    )
    assert refusal(response) == (403, "key_not_permitted")
    assert "Access-Control-Allow-Origin" not in response


def test_a_revoked_publishable_keys_origins_no_longer_pass_a_preflight(page: Persona) -> None:
    page.account.api_keys.filter(kind="publishable").get().revoke()
    response = page.client.options("/v1/verify", headers={"Origin": SHOP, "Access-Control-Request-Method": "POST"})
    assert response.status_code == 403


def test_a_secret_key_never_gets_cors_headers(owner: Persona) -> None:
    response = owner.verify("jane@good.com", Origin=SHOP)
    assert response.status_code == 200
    assert "Access-Control-Allow-Origin" not in response


def test_one_end_user_address_is_stopped_after_the_hourly_allowance(page: Persona, settings: Any) -> None:
    settings.PUBLISHABLE_PER_IP_PER_HOUR = 3
    statuses = [page.verify(f"user{n}@good.com", Origin=SHOP).status_code for n in range(5)]
    assert statuses == [200, 200, 200, 429, 429]
    limited = page.verify("user9@good.com", Origin=SHOP)
    assert limited.json()["error"]["code"] == "rate_limited"
    assert 3000 < int(limited["Retry-After"]) <= 3600
    assert balance(page) == 997
    other = page.client.post(
        "/v1/verify", {"email": "user9@good.com"}, content_type="application/json",
        headers=page.auth({"Origin": SHOP}), REMOTE_ADDR="203.0.113.9",
    )  # fmt: skip
    assert other.status_code == 200


def test_a_publishable_key_refuses_deep_while_deep_mode_is_off(page: Persona) -> None:
    response = page.post_json("/v1/verify", {"email": "a@good.com", "validation_mode": "deep"}, Origin=SHOP)
    assert refusal(response) == (400, "deep_mode_disabled")


@pytest.mark.e2e  # a thousand HTTP requests: seconds, so not in the default suite
@committed_db
def test_a_bot_sending_a_thousand_verifications_from_one_address_costs_the_hourly_allowance(live_server: Any) -> None:
    owner = make_persona(plan_code="enterprise", credits=1000)  # 200 a second: the per-address limit binds first
    key = key_create(account=owner.account, created_by=owner.account.owner, kind="publishable", allowed_origins=[SHOP])
    headers = {"Authorization": f"Bearer {key[1]}", "Origin": SHOP}
    with httpx.Client(base_url=live_server.url, headers=headers) as bot:
        statuses = [bot.post("/v1/verify", json={"email": f"bot{n}@good.com"}).status_code for n in range(1000)]
    assert (statuses.count(200), statuses.count(429)) == (30, 970)  # PUBLISHABLE_PER_IP_PER_HOUR's default
    assert balance(owner) == 1000 - 30


@pytest.mark.parametrize(
    "origin",
    [
        "https://*.co.uk",
        "https://*.com",
        "https://*.github.io",
        "https://*.s3.amazonaws.com",
        "http://*.0.0.1",
        "http://*.168.1.1",
        "https://*.uk.com",
    ],
)
def test_a_wildcard_over_a_public_suffix_or_an_address_is_400_on_allowed_origins(owner: Persona, origin: str) -> None:
    made = owner.post_json("/v1/keys", {"kind": "publishable", "allowed_origins": [origin]})
    assert made.status_code == 400
    assert (made.json()["error"]["code"], made.json()["error"]["param"]) == ("invalid_request", "allowed_origins")
    assert not owner.account.api_keys.filter(kind="publishable").exists()


@pytest.mark.parametrize(
    "origin", ["https://*.example.com", "https://*.shop.co.uk", "https://*.me.github.io", "http://*.example.internal"]
)
def test_a_wildcard_over_a_registrable_domain_is_taken(owner: Persona, origin: str) -> None:
    made = owner.post_json("/v1/keys", {"kind": "publishable", "allowed_origins": [origin]})
    assert (made.status_code, made.json()["allowed_origins"]) == (201, [origin])
