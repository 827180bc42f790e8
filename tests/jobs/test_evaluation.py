"""A list's free evaluation (docs/bulk.md, "Evaluate a list"): every plan, shares of a sample only,
bounded per account and per day, no credit moved."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from billing.models import LedgerEntry
from jobs.evaluation import margin_of_error
from jobs.models import Job, ListEvaluation
from lib.prune import prune_expired
from tests.conftest import Persona, make_persona, sandboxed
from tests.jobs.conftest import stored_files, upload
from tests.support.bulk_jobs import mixed_list
from tests.support.portal import logged_in


def preview(persona: Persona, content: bytes) -> Any:
    data = {"file": SimpleUploadedFile("crm.csv", content, "text/csv")}
    return persona.client.post("/v1/verify/bulk/preview", data=data, headers=persona.auth({}))


def free_persona() -> Persona:
    return make_persona(plan_code="free", credits=100)


def test_a_free_account_gets_the_preview_and_is_told_to_upgrade_to_clean_the_list(db: None) -> None:
    body = preview(free_persona(), mixed_list(200)).json()
    assert (body["unique"], body["bulk_in_plan"], body["estimate_withheld"]) == (200, False, None)


def test_a_free_account_still_cannot_verify_the_list(db: None, media: Path) -> None:
    response = upload(free_persona(), mixed_list(200))
    assert (response.status_code, response.json()["error"]["code"]) == (403, "plan_upgrade_required")


def test_the_estimate_of_a_10000_row_list_is_within_its_margin_of_the_truth(db: None) -> None:
    estimate = preview(free_persona(), mixed_list(10_000)).json()["estimate"]
    assert (estimate["sample_size"], estimate["population"], estimate["confidence_level"]) == (200, 10_000, 0.95)
    assert estimate["margin_of_error"] == 0.07
    truth = {"valid": 0.5, "invalid": 0.2, "risky": 0.2, "unknown": 0.1}
    assert all(abs(estimate["shares"][status] - share) <= 0.07 for status, share in truth.items()), estimate


def test_a_10000_row_list_is_evaluated_in_seconds_without_moving_a_credit(db: None, media: Path) -> None:
    persona = free_persona()
    ledger = LedgerEntry.objects.count()
    started = time.perf_counter()
    body = preview(persona, mixed_list(10_000)).json()
    assert time.perf_counter() - started < 5 and body["estimate"]["sample_size"] == 200
    persona.account.refresh_from_db()
    assert (persona.account.credit_balance, LedgerEntry.objects.count()) == (100, ledger)
    assert (Job.objects.count(), stored_files(media)) == (0, [])


def test_the_estimate_names_no_address(db: None) -> None:
    estimate = preview(free_persona(), mixed_list(1_000)).json()["estimate"]
    assert set(estimate) == {"sample_size", "population", "shares", "margin_of_error", "confidence_level"}
    assert "@" not in json.dumps(estimate)


def test_the_sample_is_at_most_half_the_list(db: None) -> None:
    estimate = preview(free_persona(), mixed_list(100)).json()["estimate"]
    assert (estimate["sample_size"], estimate["population"]) == (50, 100)
    assert estimate["margin_of_error"] == margin_of_error(50, 100) > 0


def test_a_list_under_the_minimum_is_not_estimated(db: None) -> None:
    body = preview(free_persona(), mixed_list(90)).json()
    assert (body["estimate"], body["estimate_withheld"]) == (None, "too_few_addresses")


def test_past_the_daily_limit_the_estimate_is_withheld_but_the_preview_answers(db: None, settings: Any) -> None:
    settings.LIST_EVALUATIONS_PER_DAY = 2
    persona = free_persona()
    assert [preview(persona, mixed_list(200, tag=t)).json()["evaluations_left_today"] for t in "ab"] == [1, 0]
    third = preview(persona, mixed_list(200, tag="c")).json()
    assert (third["estimate"], third["estimate_withheld"], third["unique"]) == (None, "daily_limit_reached", 200)
    assert ListEvaluation.objects.filter(account=persona.account).count() == 2


def test_the_same_list_again_gets_the_same_estimate_and_costs_no_evaluation(db: None, settings: Any) -> None:
    settings.LIST_EVALUATIONS_PER_DAY = 1
    persona = free_persona()
    first = preview(persona, mixed_list(300)).json()
    again = preview(persona, mixed_list(300)).json()
    assert first["estimate"] == again["estimate"] and again["evaluations_left_today"] == 0


def test_the_daily_limit_is_per_account(db: None, settings: Any) -> None:
    settings.LIST_EVALUATIONS_PER_DAY = 1
    preview(free_persona(), mixed_list(200))
    assert preview(free_persona(), mixed_list(200, tag="o")).json()["estimate"] is not None


def test_the_limit_comes_back_after_24_hours_and_the_records_are_pruned(db: None, settings: Any) -> None:
    settings.LIST_EVALUATIONS_PER_DAY = 1
    persona = free_persona()
    preview(persona, mixed_list(200))
    with time_machine.travel(timezone.now() + timedelta(hours=24, minutes=1)):
        assert preview(persona, mixed_list(200, tag="n")).json()["estimate"] is not None
    with time_machine.travel(timezone.now() + timedelta(hours=49)):
        prune_expired()
    assert ListEvaluation.objects.filter(account=persona.account).count() == 1


def test_a_test_key_evaluates_in_the_sandbox(db: None, dns_server: Any) -> None:
    dns_server.zone.clear()  # the sandbox asks no DNS: with an empty zone a live check would say invalid
    queries = dns_server.queries
    estimate = preview(sandboxed(free_persona()), mixed_list(200)).json()["estimate"]
    assert (estimate["shares"]["invalid"], dns_server.queries) == (0, queries)


def test_the_portal_card_shows_the_estimate_and_the_upgrade_to_a_free_account(db: None) -> None:
    persona = free_persona()
    data = {"file": SimpleUploadedFile("crm.csv", mixed_list(10_000), "text/csv")}
    started = time.perf_counter()
    page = logged_in(persona).post(reverse("job-preview"), data).content.decode()
    assert time.perf_counter() - started < 5
    assert "How good is this list?" in page and 'data-estimate-share="valid"' in page
    assert "random sample of 200 of the list's 10,000 addresses" in page
    assert "Upgrade to clean this list" in page and "data-start" not in page


def test_the_portal_card_of_a_paying_account_offers_to_verify_beside_the_estimate(owner: Persona) -> None:
    data = {"file": SimpleUploadedFile("crm.csv", mixed_list(200), "text/csv")}
    page = logged_in(owner).post(reverse("job-preview"), data).content.decode()
    assert "data-estimate-share" in page and "data-start" in page and "data-upgrade" not in page


def test_the_portal_card_says_when_todays_estimates_are_used_up(db: None, settings: Any) -> None:
    settings.LIST_EVALUATIONS_PER_DAY = 0
    data = {"file": SimpleUploadedFile("crm.csv", mixed_list(200), "text/csv")}
    page = logged_in(free_persona()).post(reverse("job-preview"), data).content.decode()
    assert 'data-estimate-withheld="daily_limit_reached"' in page
