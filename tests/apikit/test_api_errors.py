"""docs/api.md, "Errors": one error shape on every path, and authentication / rate limits."""

from __future__ import annotations

import json
import os

import pytest
import redis
import time_machine
from django.db import connection
from django.test import Client
from django.utils import timezone

from apikit.models import RateWindow
from tests.conftest import Persona, make_persona
from tests.support.db import committed_db
from tests.support.threads import run_at_once


def assert_error(response, status: int, code: str, param: str | None = None) -> dict:
    assert response.status_code == status
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "param"}
    assert body["error"]["code"] == code
    assert body["error"]["param"] == param
    assert body["error"]["message"] and "Traceback" not in body["error"]["message"]
    return body


def test_missing_authorization_is_401_with_www_authenticate(db: None) -> None:
    response = Client().post("/v1/verify", data="{}", content_type="application/json")
    assert_error(response, 401, "authentication_required")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_non_bearer_authorization_is_authentication_required(db: None) -> None:
    response = Client().post(
        "/v1/verify", data="{}", content_type="application/json", headers={"Authorization": "Basic eDp5"}
    )
    assert_error(response, 401, "authentication_required")


def test_unknown_key_is_401_invalid_api_key(db: None) -> None:
    response = Client().post(
        "/v1/verify", data="{}", content_type="application/json", headers={"Authorization": "Bearer ev_live_nope"}
    )
    assert_error(response, 401, "invalid_api_key")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_revoked_key_is_refused_at_once(owner: Persona) -> None:
    assert owner.verify("jane@good.com").status_code == 200
    owner.account.api_keys.get().revoke()
    assert_error(owner.verify("jane@good.com"), 401, "invalid_api_key")


def test_keys_of_an_owner_staff_deactivated_are_refused_at_once(owner: Persona, outsider: Persona) -> None:
    assert owner.verify("jane@good.com").status_code == 200
    owner.account.owner.is_active = False
    owner.account.owner.save(update_fields=["is_active"])
    assert_error(owner.verify("jane@good.com"), 401, "invalid_api_key")
    assert outsider.verify("jane@good.com").status_code == 200


def test_key_use_is_recorded(owner: Persona) -> None:
    owner.verify("jane@good.com")
    assert owner.account.api_keys.get().last_used_at is not None


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({}, "email"),
        ({"email": None}, "email"),
        ({"email": 42}, "email"),
        ({"email": ["a@good.com"]}, "email"),
        ({"email": True}, "email"),
        ({"email": "x" * 1001}, "email"),
        ({"email": "a@good.com", "validation_mode": "turbo"}, "validation_mode"),
        ({"email": "a@good.com", "validation_mode": 1}, "validation_mode"),
        (["a@good.com"], None),
        ("just a string", None),
    ],
)
def test_malformed_request_is_400_invalid_request(owner: Persona, body, param: str | None) -> None:
    assert_error(owner.post_json("/v1/verify", body), 400, "invalid_request", param)


def test_email_of_exactly_1000_characters_gets_a_verdict(owner: Persona) -> None:
    response = owner.verify("x" * 990 + "@good.com")
    assert response.status_code == 200
    assert response.json()["sub_status"] == "invalid_syntax"


@pytest.mark.parametrize("raw", ["{not json", '{"email": "a@good.com"', "\xff\xfe", "nan"])
def test_malformed_json_is_400(owner: Persona, raw: str) -> None:
    assert_error(owner.post_json("/v1/verify", raw), 400, "invalid_request")


def test_empty_body_is_a_missing_email(owner: Persona) -> None:
    assert_error(owner.post_json("/v1/verify", ""), 400, "invalid_request", "email")


def test_deep_mode_is_refused(owner: Persona) -> None:
    response = owner.post_json("/v1/verify", {"email": "a@good.com", "validation_mode": "deep"})
    assert_error(response, 400, "deep_mode_disabled", "validation_mode")


def test_fast_mode_can_be_asked_for_explicitly(owner: Persona) -> None:
    response = owner.post_json("/v1/verify", {"email": "a@good.com", "validation_mode": "fast"})
    assert response.json()["validation_mode"] == "fast"


def test_huge_body_is_refused_unread(owner: Persona) -> None:
    response = owner.post_json("/v1/verify", {"email": "a@good.com", "padding": "x" * 100_000})
    assert_error(response, 413, "request_too_large")


def test_wrong_content_type_is_415(owner: Persona) -> None:
    response = owner.client.post(
        "/v1/verify",
        data="email=a@good.com",
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Bearer {owner.api_key}"},
    )
    assert_error(response, 415, "unsupported_media_type")


def test_wrong_method_is_405(owner: Persona) -> None:
    assert_error(owner.get("/v1/verify"), 405, "method_not_allowed")


@pytest.mark.parametrize("path", ["/v1/", "/v1/nothing", "/v1/verify/", "/v1/jobs/x/y/z"])
def test_unknown_path_is_404_in_the_error_shape(owner: Persona, path: str) -> None:
    assert_error(owner.get(path), 404, "not_found")


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/v1/bulk", 404, "not_found"),
        ("/v1/", 404, "not_found"),
        ("/v1/results/not-a-token", 404, "not_found"),
        ("/v1/docs", 405, "method_not_allowed"),
    ],
)
def test_a_write_to_an_unknown_path_or_a_read_only_page_is_refused_in_the_error_shape(
    owner: Persona, method: str, path: str, status: int, code: str
) -> None:
    # A client as browsers are held to it: Django's CSRF check refused these before the view, with its HTML page.
    client = Client(enforce_csrf_checks=True)
    response = getattr(client, method)(path, data="{}", content_type="application/json", headers=owner.auth({}))
    assert_error(response, status, code)
    assert response["Content-Type"].startswith("application/json")


def test_unhandled_exception_is_500_without_a_stack_trace(owner: Persona) -> None:
    # A broken verdict cache table, for real: dropped inside this test's transaction (rolled back after).
    from verification.models import CachedVerdict

    table = CachedVerdict._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {table}")
    owner.client.raise_request_exception = False
    body = assert_error(owner.verify("jane@good.com"), 500, "internal_error")
    assert table not in json.dumps(body) and "Traceback" not in json.dumps(body)


def test_rate_limit_follows_the_plan_and_sends_retry_after(db: None) -> None:
    free = make_persona(plan_code="free", credits=100)
    with time_machine.travel(timezone.now().replace(microsecond=0), tick=False):
        statuses = [free.verify("x@good.com").status_code for _ in range(6)]
        assert statuses == [200] * 5 + [429]
        limited = free.verify("x@good.com")
    body = assert_error(limited, 429, "rate_limited")
    assert limited["Retry-After"] == "1"
    assert "X-Credits-Remaining" in limited
    assert body


def test_rate_limited_requests_cost_nothing(db: None) -> None:
    free = make_persona(plan_code="free", credits=100)
    with time_machine.travel(timezone.now().replace(microsecond=0), tick=False):
        for _ in range(8):
            free.verify("x@good.com")
    free.account.refresh_from_db()
    assert free.account.credit_balance == 95


def test_rate_limit_window_resets_each_second(db: None) -> None:
    free = make_persona(plan_code="free", credits=100)
    with time_machine.travel(timezone.now().replace(microsecond=0), tick=False) as clock:
        for _ in range(6):
            free.verify("x@good.com")
        clock.shift(1)
        assert free.verify("x@good.com").status_code == 200


def test_rate_limit_is_per_key(db: None) -> None:
    from tests.factories import issue_key

    free = make_persona(plan_code="free", credits=100)
    second_key = issue_key(free.account, "second")
    with time_machine.travel(timezone.now().replace(microsecond=0), tick=False):
        for _ in range(6):
            free.verify("x@good.com")
        response = free.client.post(
            "/v1/verify",
            data='{"email": "x@good.com"}',
            content_type="application/json",
            headers={"Authorization": f"Bearer {second_key}"},
        )
    assert response.status_code == 200


@pytest.mark.parametrize(("plan", "limit"), [("starter", 20), ("pro", 50), ("enterprise", 200)])
def test_higher_plans_allow_more_requests(db: None, plan: str, limit: int) -> None:
    persona = make_persona(plan_code=plan, credits=1000)
    with time_machine.travel(timezone.now().replace(microsecond=0), tick=False):
        statuses = [persona.verify("x@good.com").status_code for _ in range(limit + 1)]
    assert statuses.count(200) == limit and statuses[-1] == 429


@committed_db
def test_the_database_rate_counter_counts_every_concurrent_request_once() -> None:
    key_id = make_persona(plan_code="free", credits=1).account.api_keys.get().pk
    counts = run_at_once(30, lambda: RateWindow.objects.hit(key_id=key_id, second=1_800_000_000))
    assert sorted(counts) == list(range(1, 31))


@pytest.fixture
def redis_rate_counter(settings):
    url = "redis://127.0.0.1:6379/12"
    try:
        redis.Redis.from_url(url).flushdb()
    except redis.ConnectionError:
        if os.environ.get("CI"):
            raise
        pytest.skip("no Redis on 127.0.0.1:6379 (CI always has one)")
    settings.REDIS_URL = url
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}
    yield
    redis.Redis.from_url(url).flushdb()


def test_with_redis_the_rate_is_counted_in_redis(db: None, redis_rate_counter: None) -> None:
    free = make_persona(plan_code="free", credits=100)
    with time_machine.travel(timezone.now().replace(microsecond=0), tick=False):
        statuses = [free.verify("x@good.com").status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    assert not RateWindow.objects.exists()


def test_with_redis_a_windows_counter_expires_soon_after_its_second(db: None, redis_rate_counter: None) -> None:
    free = make_persona(plan_code="free", credits=100)
    for _ in range(2):
        assert free.verify("x@good.com").status_code == 200
    client = redis.Redis.from_url("redis://127.0.0.1:6379/12")
    [counter] = client.keys("*rate:*")
    assert 0 < client.ttl(counter) <= 3  # never left behind without an expiry
