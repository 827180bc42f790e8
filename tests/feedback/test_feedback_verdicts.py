"""Reported outcomes on the reporting account's verdicts: fast and deep, single, batch and bulk, cache or not."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.module_loading import import_string
from django_q.models import Schedule

from accounts.models import Membership, Role
from lib import sql
from tests.conftest import Persona, make_persona, sandboxed
from tests.jobs.conftest import upload
from verification.models import CatchAllAnswer
from verification.outcomes import global_catch_all_rate


def report(persona: Persona, email: str, outcome: str, when: Any = None) -> None:
    event: dict[str, Any] = {"email": email, "outcome": outcome}
    if when is not None:
        event["occurred_at"] = when.isoformat()
    assert persona.post_json("/v1/feedback", {"events": [event]}).json()["accepted"] == 1


def verdict(persona: Persona, email: str, mode: str = "fast") -> dict[str, Any]:
    response = persona.post_json("/v1/verify", {"email": email, "validation_mode": mode})
    assert response.status_code == 200, response.content
    return response.json()


def test_without_feedback_the_result_says_so(owner: Persona) -> None:
    body = verdict(owner, "jane@good.com")
    assert (body["status"], body["feedback"], body["deliverability"]) == ("valid", None, None)


def test_a_hard_bounce_makes_the_address_invalid_mailbox_not_found(owner: Persona) -> None:
    when = timezone.now() - timedelta(days=2)
    report(owner, "Jane@Good.com", "hard_bounce", when)
    body = verdict(owner, "jane@good.com")
    assert (body["status"], body["sub_status"], body["is_valid"], body["checks"]["smtp_valid"]) == (
        "invalid",
        "mailbox_not_found",
        False,
        False,
    )
    assert body["feedback"]["outcome"] == "hard_bounce"
    assert body["feedback"]["occurred_at"] == when.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_the_verdict_cache_does_not_hide_a_newer_report(owner: Persona) -> None:
    assert verdict(owner, "jane@good.com")["status"] == "valid"
    report(owner, "jane@good.com", "hard_bounce")
    body = verdict(owner, "jane@good.com")
    assert (body["cached"], body["status"], body["feedback"]["outcome"]) == (True, "invalid", "hard_bounce")


def test_a_later_delivery_overrides_a_hard_bounce(owner: Persona) -> None:
    report(owner, "jane@good.com", "hard_bounce", timezone.now() - timedelta(days=3))
    report(owner, "jane@good.com", "delivered", timezone.now() - timedelta(days=1))
    body = verdict(owner, "jane@good.com")
    assert (body["status"], body["feedback"]["outcome"]) == ("valid", "delivered")


def test_a_hard_bounce_counts_for_90_days(owner: Persona) -> None:
    report(owner, "jane@good.com", "hard_bounce", timezone.now() - timedelta(days=89))
    assert verdict(owner, "jane@good.com")["status"] == "invalid"
    with time_machine.travel(timezone.now() + timedelta(days=2)):
        body = verdict(owner, "jane@good.com")
    assert (body["status"], body["feedback"]) == ("valid", None)


def test_soft_bounces_and_complaints_change_no_verdict(owner: Persona) -> None:
    report(owner, "jane@good.com", "soft_bounce")
    report(owner, "jane@good.com", "complaint")
    body = verdict(owner, "jane@good.com")
    assert (body["status"], body["feedback"]) == ("valid", None)


def test_one_accounts_hard_bounce_changes_no_other_accounts_verdict(owner: Persona, outsider: Persona) -> None:
    report(owner, "jane@good.com", "hard_bounce")
    body = verdict(outsider, "jane@good.com")
    assert (body["status"], body["feedback"]) == ("valid", None)


def test_batch_answers_follow_feedback_too(owner: Persona) -> None:
    report(owner, "jane@good.com", "hard_bounce")
    body = owner.post_json("/v1/verify/batch", {"emails": ["jane@good.com", "joe@good.com"]}).json()
    assert [row["status"] for row in body["data"]] == ["invalid", "valid"]


def test_a_test_key_gets_the_sandbox_answers_whatever_was_reported(owner: Persona) -> None:
    report(owner, "jane@good.com", "hard_bounce")
    body = verdict(sandboxed(owner), "jane@good.com")
    assert body["feedback"] is None


@pytest.mark.usefixtures("deep_farm")
class TestDeep:
    def test_a_delivery_settles_a_catch_all_address_as_valid_with_medium_confidence(self, owner: Persona) -> None:
        assert verdict(owner, "whoever@anything.deepfarm.net", "deep")["sub_status"] == "catch_all"
        report(owner, "whoever@anything.deepfarm.net", "delivered")
        body = verdict(owner, "whoever@anything.deepfarm.net", "deep")
        assert (body["status"], body["sub_status"], body["is_valid"], body["confidence"]) == (
            "valid",
            None,
            True,
            "medium",
        )
        assert (body["feedback"]["outcome"], body["deliverability"]) == ("delivered", None)

    def test_a_delivery_then_a_hard_bounce_is_invalid(self, owner: Persona) -> None:
        report(owner, "whoever@anything.deepfarm.net", "delivered", timezone.now() - timedelta(hours=2))
        report(owner, "whoever@anything.deepfarm.net", "hard_bounce", timezone.now() - timedelta(hours=1))
        body = verdict(owner, "whoever@anything.deepfarm.net", "deep")
        assert (body["status"], body["sub_status"]) == ("invalid", "mailbox_not_found")

    def test_a_catch_all_result_carries_the_prior_estimate_without_outcomes(
        self, owner: Persona, settings: Any
    ) -> None:
        settings.FEEDBACK_CATCH_ALL_PRIOR = 0.7
        body = verdict(owner, "whoever@anything.deepfarm.net", "deep")
        assert body["deliverability"] == {"estimate": 0.7, "basis": 0}
        assert body["score"] == 70

    def test_the_estimate_follows_the_domains_outcomes_and_the_score_follows_it(self, owner: Persona) -> None:
        events = [{"email": f"gone{n}@anything.deepfarm.net", "outcome": "hard_bounce"} for n in range(30)]
        assert owner.post_json("/v1/feedback", {"events": events}).json()["accepted"] == 30
        body = verdict(owner, "whoever@anything.deepfarm.net", "deep")
        assert body["deliverability"]["basis"] == 20  # its own outcomes: at most 20 a domain, in full for itself
        assert body["deliverability"]["estimate"] < 0.5
        assert body["score"] == round(100 * body["deliverability"]["estimate"])

    def test_other_accounts_outcomes_inform_the_estimate_but_not_the_verdict(
        self, owner: Persona, settings: Any
    ) -> None:
        settings.FEEDBACK_CATCH_ALL_PRIOR = 0.7
        for n in range(5):  # five unrelated accounts, four deliveries each
            events = [{"email": f"real{n}x{i}@anything.deepfarm.net", "outcome": "delivered"} for i in range(4)]
            assert make_persona(plan_code="starter").post_json("/v1/feedback", {"events": events}).status_code == 200
        body = verdict(owner, "whoever@anything.deepfarm.net", "deep")
        assert (body["status"], body["sub_status"], body["feedback"]) == ("risky", "catch_all", None)
        assert body["deliverability"]["basis"] == 2  # each other account weighs at most 0.4 outcomes
        assert body["deliverability"]["estimate"] > 0.74

    def test_one_other_account_alone_moves_the_estimate_less_than_five_points(
        self, owner: Persona, outsider: Persona, settings: Any
    ) -> None:
        settings.FEEDBACK_CATCH_ALL_PRIOR = 0.7
        events = [{"email": f"fake{n}@anything.deepfarm.net", "outcome": "delivered"} for n in range(200)]
        assert outsider.post_json("/v1/feedback", {"events": events}).json()["accepted"] == 200
        assert 0.7 <= verdict(owner, "whoever@anything.deepfarm.net", "deep")["deliverability"]["estimate"] < 0.75
        assert verdict(outsider, "whoever@anything.deepfarm.net", "deep")["deliverability"]["estimate"] > 0.9

    def test_accounts_sharing_a_member_weigh_as_one_in_the_estimate(
        self, owner: Persona, outsider: Persona, settings: Any
    ) -> None:
        settings.FEEDBACK_CATCH_ALL_PRIOR = 0.7
        Membership.objects.create(account=outsider.account, user=owner.account.owner, role=Role.ADMIN)
        for persona, name in ((owner, "a"), (outsider, "b")):
            events = [{"email": f"{name}{n}@anything.deepfarm.net", "outcome": "delivered"} for n in range(20)]
            assert persona.post_json("/v1/feedback", {"events": events}).json()["accepted"] == 20
        third = make_persona(plan_code="starter")
        assert verdict(third, "whoever@anything.deepfarm.net", "deep")["deliverability"]["estimate"] < 0.75


def test_bulk_rows_follow_feedback(owner: Persona, run_tasks: Any) -> None:
    report(owner, "jane@good.com", "hard_bounce")
    with run_tasks():
        response = upload(owner, b"email\njane@good.com\njoe@good.com\n")
    job_id = response.json()["id"]
    link = owner.get(f"/v1/jobs/{job_id}/results")["Location"].removeprefix("http://testserver")
    body = b"".join(owner.client.get(link).streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert [(row["email"], row["status"], row["feedback"]) for row in rows] == [
        ("jane@good.com", "invalid", "hard_bounce"),
        ("joe@good.com", "valid", ""),
    ]


def test_a_bulk_chunk_of_more_addresses_than_one_statement_takes_follows_feedback_to_its_last_row(
    owner: Persona, run_tasks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sql, "SQLITE_PARAMETERS", 10)  # so that a small chunk's lookup takes several
    report(owner, "zz-last@good.com", "hard_bounce")  # first in the file, last (sorted) in its chunk's lookup
    emails = ["zz-last@good.com"] + [f"user{n:02d}@good.com" for n in range(30)]
    with run_tasks():
        response = upload(owner, ("email\n" + "\n".join(emails) + "\n").encode())
    job_id = response.json()["id"]
    link = owner.get(f"/v1/jobs/{job_id}/results")["Location"].removeprefix("http://testserver")
    body = b"".join(owner.client.get(link).streaming_content).decode()
    rows = {row["email"]: (row["status"], row["feedback"]) for row in csv.DictReader(io.StringIO(body))}
    assert (len(rows), rows["zz-last@good.com"], rows["user29@good.com"]) == (
        31,
        ("invalid", "hard_bounce"),
        ("valid", ""),
    )


def test_a_fresh_account_has_no_feedback(db: None) -> None:
    assert verdict(make_persona(plan_code="starter"), "jane@good.com")["feedback"] is None


def test_the_global_rate_is_read_from_the_cache_and_a_new_report_counts_at_the_next_refresh(
    owner: Persona, outsider: Persona
) -> None:
    CatchAllAnswer.objects.store_many({"acme.example": True})
    before = global_catch_all_rate()  # a cold cache: computed once, in the answer
    with CaptureQueriesContext(connection) as queries:
        assert global_catch_all_rate() == before
    # At most the cache's row (the database cache); never the reports themselves.
    assert not [q for q in queries if "feedback_" in q["sql"].lower()]
    events = [{"email": f"gone{n}@acme.example", "outcome": "hard_bounce"} for n in range(5)]
    assert outsider.post_json("/v1/feedback", {"events": events}).json()["accepted"] == 5
    assert global_catch_all_rate() == before  # answers never pay for the reports: the workers do
    schedule = Schedule.objects.get(name="verification: global catch-all rate")  # every minute, on the workers
    assert (schedule.func, schedule.minutes) == ("verification.outcomes.global_catch_all_rate_refresh", 1)
    import_string(schedule.func)()
    assert global_catch_all_rate() < before
