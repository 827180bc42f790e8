"""GET /metrics (README, "Operations"): only with METRICS_TOKEN, only to its bearer; counters move.

In one process here; tests/ops/test_metrics_gunicorn.py scrapes several gunicorn workers at once.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from jobs.models import Chunk, Job
from tests.conftest import Persona
from tests.support.metrics import TOKEN, scrape, value
from tests.support.portal import logged_in


def test_metrics_is_404_without_a_token_setting(db: None) -> None:
    response = Client().get("/metrics", headers={"Authorization": "Bearer anything"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x", TOKEN])
def test_metrics_without_the_token_is_401_in_the_contract_shape(metrics_on: None, db: None, header: str | None) -> None:
    headers = {"Authorization": header} if header is not None else {}
    response = Client().get("/metrics", headers=headers)
    assert response.status_code == 401
    assert response.json() == {
        "error": {
            "code": "authentication_required",
            "message": "Send 'Authorization: Bearer <METRICS_TOKEN>'.",
            "param": None,
        }
    }
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_api_verify_counts_a_verification_by_status_and_source(metrics_on: None, owner: Persona) -> None:
    before = scrape()
    owner.verify("jane@good.com")
    owner.verify("nobody@nxdomain-for-metrics.com")
    after = scrape()
    for status in ("valid", "invalid"):
        name = "verifier_verifications_total"
        assert value(after, name, status=status, source="api") == value(before, name, status=status, source="api") + 1


def test_portal_verify_counts_with_source_portal(metrics_on: None, owner: Persona) -> None:
    before = value(scrape(), "verifier_verifications_total", status="valid", source="portal")
    logged_in(owner).post(reverse("verify"), {"email": "jane@good.com"})
    assert value(scrape(), "verifier_verifications_total", status="valid", source="portal") == before + 1


def test_dns_queries_are_counted_by_outcome_and_cached_domains_are_not(metrics_on: None, owner: Persona) -> None:
    before = scrape()
    owner.verify("a@company.com")
    owner.verify("b@company.com")  # the domain cache answers: no query
    owner.verify("c@servfail.com")
    after = scrape()
    name = "verifier_dns_queries_total"
    assert value(after, name, outcome="mx") == value(before, name, outcome="mx") + 1
    assert value(after, name, outcome="failure") == value(before, name, outcome="failure") + 1


def test_requests_are_counted_and_timed_per_view(metrics_on: None, owner: Persona) -> None:
    before = scrape()
    owner.verify("jane@good.com")
    after = scrape()
    labels = {"view": "api-verify", "method": "POST", "status": "200"}
    assert (
        value(after, "verifier_http_requests_total", **labels)
        == value(before, "verifier_http_requests_total", **labels) + 1
    )
    count = "verifier_http_request_duration_seconds_count"
    assert value(after, count, view="api-verify") == value(before, count, view="api-verify") + 1


def test_queue_depth_counts_chunks_waiting(metrics_on: None, owner: Persona) -> None:
    job = Job.objects.create(account=owner.account, input_name="x", total=30)
    Chunk.objects.bulk_create(Chunk(job=job, index=i, size=10) for i in range(3))
    Chunk.objects.filter(job=job, index=0).update(state=Chunk.State.RUNNING)
    samples = scrape()
    assert value(samples, "verifier_queue_depth") == 2
    assert value(samples, "verifier_queue_oldest_seconds") >= 0
