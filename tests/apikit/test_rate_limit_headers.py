"""The RateLimit header fields (draft-ietf-httpapi-ratelimit-headers) on every authenticated response."""

from __future__ import annotations

from typing import Any

import http_sf
import pytest
import time_machine
from django.utils import timezone

from tests.conftest import Persona, make_persona


def fields(response: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(policy, state) of the "plan" policy, parsed as structured-field lists."""
    policy = http_sf.parse(response["RateLimit-Policy"].encode(), tltype="list")
    state = http_sf.parse(response["RateLimit"].encode(), tltype="list")
    assert [item[0] for item in policy] == [item[0] for item in state] == ["plan"]
    return policy[0][1], state[0][1]


def frozen() -> Any:
    return time_machine.travel(timezone.now().replace(microsecond=0), tick=False)


def test_each_answer_announces_the_quota_and_what_is_left(db: None) -> None:
    free = make_persona(plan_code="free", credits=100)
    with frozen():
        answers = [fields(free.verify("x@good.com")) for _ in range(3)]
    assert [policy for policy, _ in answers] == [{"q": 5, "w": 1}] * 3
    assert [state for _, state in answers] == [{"r": 4, "t": 1}, {"r": 3, "t": 1}, {"r": 2, "t": 1}]


def test_the_quota_is_the_plans(owner: Persona) -> None:
    policy, _ = fields(owner.get("/v1/account"))
    assert policy == {"q": 20, "w": 1}


def test_429_says_nothing_is_left_and_when_to_retry(db: None) -> None:
    free = make_persona(plan_code="free", credits=100)
    with frozen():
        for _ in range(5):
            free.verify("x@good.com")
        limited = free.verify("x@good.com")
    assert limited.status_code == 429
    assert fields(limited)[1] == {"r": 0, "t": 1}
    assert limited["Retry-After"] == "1"


def test_the_count_starts_again_in_the_next_window(db: None) -> None:
    free = make_persona(plan_code="free", credits=100)
    with frozen() as clock:
        for _ in range(6):
            free.verify("x@good.com")
        clock.shift(1)
        assert fields(free.verify("x@good.com"))[1] == {"r": 4, "t": 1}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/v1/verify", {"email": "x@good.com", "validation_mode": "deep"}),
        ("post", "/v1/verify/batch", {"emails": []}),
        ("get", "/v1/jobs", None),
        ("get", "/v1/jobs/job_nosuchjob000000000000000", None),
        ("get", "/v1/account", None),
    ],
)
def test_errors_and_every_endpoint_carry_the_fields(owner: Persona, method: str, path: str, body: Any) -> None:
    response = owner.post_json(path, body) if method == "post" else owner.get(path)
    policy, state = fields(response)
    assert policy["q"] == 20 and 0 <= state["r"] < 20


def test_a_zero_balance_402_carries_the_fields(db: None) -> None:
    broke = make_persona(credits=0)
    response = broke.verify("x@good.com")
    assert response.status_code == 402
    assert "RateLimit" in response and "RateLimit-Policy" in response


def test_unauthenticated_answers_carry_none(client: Any, db: None) -> None:
    response = client.get("/v1/account")
    assert response.status_code == 401
    assert "RateLimit" not in response and "RateLimit-Policy" not in response
