"""docs/keys.md, "Spend caps": a key past its daily or monthly cap answers 402 key_spend_cap_reached,
charges nothing, and the account's other keys go on; exact under concurrency."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.models import ApiKey, KeyMode
from tests.conftest import Persona, make_persona
from tests.support.db import committed_db
from tests.support.threads import run_at_once


def capped(persona: Persona, **caps: int) -> Persona:
    persona.api_key = ApiKey.issue(account=persona.account, name="Capped", **caps)[1]
    return persona


def balance(persona: Persona) -> int:
    persona.account.refresh_from_db()
    return persona.account.credit_balance


def test_a_key_past_its_daily_cap_gets_402_and_the_accounts_other_keys_go_on(owner: Persona) -> None:
    other_key = owner.api_key
    capped(owner, daily_cap=2)
    assert [owner.verify(f"a{n}@good.com").status_code for n in range(2)] == [200, 200]
    refused = owner.verify("a3@good.com")
    assert refused.status_code == 402
    assert refused.json()["error"]["code"] == "key_spend_cap_reached"
    assert balance(owner) == 998
    owner.api_key = other_key
    assert owner.verify("a3@good.com").status_code == 200


def test_the_daily_cap_opens_again_the_next_utc_day_but_the_monthly_one_holds(owner: Persona) -> None:
    with time_machine.travel(datetime(2026, 11, 10, 23, 59, tzinfo=UTC)):
        capped(owner, daily_cap=1, monthly_cap=2)
        assert owner.verify("a1@good.com").status_code == 200
        assert owner.verify("a2@good.com").status_code == 402
    with time_machine.travel(datetime(2026, 11, 11, 0, 1, tzinfo=UTC)):
        assert owner.verify("a2@good.com").status_code == 200
    with time_machine.travel(datetime(2026, 11, 12, 9, 0, tzinfo=UTC)):
        response = owner.verify("a3@good.com")
        assert response.json()["error"]["message"].startswith("This API key has reached its monthly spend cap")
    with time_machine.travel(datetime(2026, 12, 1, 0, 0, tzinfo=UTC)):
        assert owner.verify("a3@good.com").status_code == 200


def test_a_batch_that_would_pass_the_cap_is_refused_whole(owner: Persona) -> None:
    capped(owner, daily_cap=2)
    response = owner.post_json("/v1/verify/batch", {"emails": ["a@good.com", "b@good.com", "c@good.com"]})
    assert (response.status_code, response.json()["error"]["code"]) == (402, "key_spend_cap_reached")
    assert balance(owner) == 1000


def test_an_idempotent_replay_is_not_counted_again(owner: Persona) -> None:
    capped(owner, daily_cap=1)
    first = owner.verify("a@good.com", **{"Idempotency-Key": "k1"})
    replay = owner.verify("a@good.com", **{"Idempotency-Key": "k1"})
    assert replay.content == first.content and replay["Idempotent-Replayed"] == "true"
    assert ApiKey.objects.get(prefix=owner.api_key[:12]).spent_day == 1


def test_a_test_key_counts_what_it_would_spend_against_its_cap(owner: Persona) -> None:
    owner.api_key = ApiKey.issue(account=owner.account, key_mode=KeyMode.TEST, daily_cap=1)[1]
    assert owner.verify("valid@sandbox.example").status_code == 200
    assert owner.verify("valid@sandbox.example").status_code == 402
    assert balance(owner) == 1000


def test_the_keys_api_shows_what_a_key_spent(owner: Persona) -> None:
    made = owner.post_json("/v1/keys", {"name": "Capped", "daily_cap": 5}).json()
    owner.client.post(
        "/v1/verify", {"email": "a@good.com"}, content_type="application/json",
        headers={"Authorization": f"Bearer {made['key']}"},
    )  # fmt: skip
    shown = next(key for key in owner.get("/v1/keys").json()["data"] if key["id"] == made["id"])
    assert (shown["spent_today"], shown["spent_this_month"]) == (1, 1)
    with time_machine.travel(datetime.now(UTC) + timedelta(days=40)):
        shown = next(key for key in owner.get("/v1/keys").json()["data"] if key["id"] == made["id"])
    assert (shown["spent_today"], shown["spent_this_month"]) == (0, 0)


@committed_db
def test_fifty_parallel_requests_on_a_key_with_ten_left_charge_exactly_ten() -> None:
    owner = capped(make_persona(plan_code="enterprise", credits=1000), daily_cap=10)  # 200 requests a second
    raw = owner.api_key

    def verify(n: int) -> int:
        response = Client().post(
            "/v1/verify", {"email": f"user{n}@good.com"}, content_type="application/json",
            headers={"Authorization": f"Bearer {raw}"},
        )  # fmt: skip
        return int(response.status_code)

    numbers = iter(range(50))
    statuses = run_at_once(50, lambda: verify(next(numbers)))
    assert sorted(statuses) == [200] * 10 + [402] * 40
    assert balance(owner) == 990
    assert ApiKey.objects.get(prefix=raw[:12]).spent_day == 10


def upload(persona: Persona, rows: str) -> Any:
    listing = SimpleUploadedFile("list.csv", rows.encode(), content_type="text/csv")
    return persona.client.post("/v1/verify/bulk", {"file": listing}, headers=persona.auth({}))


def test_a_bulk_list_counts_its_addresses_against_the_keys_cap_and_a_bigger_one_is_refused(owner: Persona) -> None:
    capped(owner, daily_cap=3)
    assert upload(owner, "email\na@good.com\nb@good.com\n").status_code == 202
    refused = upload(owner, "email\nc@good.com\nd@good.com\n")
    assert (refused.status_code, refused.json()["error"]["code"]) == (402, "key_spend_cap_reached")
    assert owner.account.jobs.count() == 1
    assert ApiKey.objects.get(prefix=owner.api_key[:12]).spent_day == 2
