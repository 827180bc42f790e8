"""estimated_seconds (docs/bulk.md; README, DNS): from the most recently completed jobs, weighted by rows,
and never less than a rate-capped resolver needs for the domains not cached."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from jobs.estimates import estimated_seconds
from jobs.models import Job
from tests.conftest import Persona
from tests.jobs.conftest import upload
from verification.engine import DomainAnswer, DomainStatus
from verification.models import DomainRecord


def finished(persona: Persona, rows: int, seconds: float, *, ago: timedelta = timedelta(minutes=1)) -> Job:
    completed = timezone.now() - ago
    return Job.objects.create(
        account=persona.account,
        status=Job.Status.COMPLETED,
        input_name="x",
        total=rows,
        processed=rows,
        started_at=completed - timedelta(seconds=seconds),
        completed_at=completed,
    )


def within_factor_3(estimate: int, real: float) -> bool:
    return real / 3 <= estimate <= real * 3


def test_tiny_jobs_do_not_drag_the_estimate_of_a_large_list(owner: Persona) -> None:
    # What the issue measured: a 50,000-row job that took 6 s, among many one-row jobs of a second each.
    finished(owner, 50_000, 6.0, ago=timedelta(minutes=5))
    for minute in range(19):
        finished(owner, 1, 1.0, ago=timedelta(seconds=minute))
    assert within_factor_3(estimated_seconds(50_000), 6.0)
    assert within_factor_3(estimated_seconds(20_000), 20_000 / 50_000 * 6.0)


def test_the_most_recent_jobs_count_not_old_ones(owner: Persona) -> None:
    # Created last, finished long ago: what counts is when a job completed, not when it was created.
    for minute in range(20):
        finished(owner, 10_000, 1.0, ago=timedelta(minutes=minute + 1))
    for hour in range(1, 101):
        finished(owner, 10_000, 100.0, ago=timedelta(hours=hour))
    assert within_factor_3(estimated_seconds(10_000), 1.0)


def test_without_any_history_the_default_rate_is_used(db: None, settings: object) -> None:
    settings.BULK_DEFAULT_ROWS_PER_SECOND = 500.0  # type: ignore[attr-defined]
    assert estimated_seconds(10_000) == 20
    assert estimated_seconds(1) == 1


def addresses_over(domains: int, per_domain: int = 3) -> list[str]:
    return [f"user{i}@company{d}.com" for d in range(domains) for i in range(per_domain)]


def test_a_rate_capped_resolver_floors_the_estimate_at_uncached_domains_over_max_qps(
    owner: Persona, settings: Any
) -> None:
    finished(owner, 100_000, 1.0)  # recent jobs say 100,000 rows a second: 3,000 rows in a blink
    addresses = addresses_over(1_000)
    DomainRecord.objects.put_many(
        DomainAnswer(f"company{d}.com", DomainStatus.MX, 3600, (f"mx.company{d}.com",)) for d in range(200)
    )
    settings.VERIFIER_DNS_MAX_QPS = 0.0
    assert estimated_seconds(len(addresses), addresses=addresses) == 1
    settings.VERIFIER_DNS_MAX_QPS = 100.0
    assert estimated_seconds(len(addresses), addresses=addresses) == 8  # (1,000 - 200 cached) / 100 q/s


def test_preview_and_submission_say_how_long_the_capped_resolver_takes(owner: Persona, settings: Any) -> None:
    settings.VERIFIER_DNS_MAX_QPS = 10.0
    settings.LIST_EVALUATIONS_PER_DAY = 0  # the preview's sample would put some of the domains in the cache
    content = ("email\n" + "\n".join(addresses_over(300, per_domain=2)) + "\n").encode()
    data = {"file": SimpleUploadedFile("list.csv", content, "text/csv")}
    preview = owner.client.post("/v1/verify/bulk/preview", data=data, headers=owner.auth({}))
    assert preview.json()["estimated_seconds"] == 30  # 300 domains at 10 a second, whatever the default rate
    receipt = upload(owner, content)
    assert (receipt.status_code, receipt.json()["estimated_seconds"]) == (202, 30)


def test_a_fresh_deployments_first_large_job_is_not_judged_by_its_small_ones(owner: Persona) -> None:
    # What the probe measured: a few one-row jobs of a second each (queue pickup), then 50,000 rows
    # that took ~2 s were estimated at 1,366 s. Small jobs say nothing of a large one's rate.
    for minute in range(19):
        finished(owner, 1, 1.0, ago=timedelta(seconds=minute))
    finished(owner, 500, 2.0)
    assert estimated_seconds(50_000) == estimated_seconds(50_000, addresses=()) <= 25
    assert estimated_seconds(1) == 1


def test_deep_jobs_are_estimated_from_deep_jobs_and_fast_ones_from_fast(owner: Persona, settings: Any) -> None:
    """A deep job waits on mail servers: estimated at a fast job's speed, it would promise seconds
    for what takes minutes (and the other way round)."""
    settings.BULK_DEEP_DEFAULT_ROWS_PER_SECOND = 20.0
    finished(owner, 10_000, 1.0)  # fast: 10,000 rows/s
    assert estimated_seconds(10_000, mode="deep") == 500  # no deep job yet: the deep default
    deep = finished(owner, 2_000, 50.0)
    Job.objects.filter(pk=deep.pk).update(validation_mode="deep")  # 40 rows/s
    assert estimated_seconds(10_000, mode="deep") == 250
    assert within_factor_3(estimated_seconds(10_000), 1.0)
    assert estimated_seconds(10_000, mode="fast") == estimated_seconds(10_000)


def test_a_deep_preview_estimates_at_the_deep_rate(owner: Persona, settings: Any, deep_farm: Any) -> None:
    settings.BULK_DEEP_DEFAULT_ROWS_PER_SECOND = 10.0
    rows = "email\n" + "".join(f"user{i}@mailbox.deepfarm.net\n" for i in range(100))
    for mode, expected in (("fast", 1), ("deep", 10)):
        data = {"file": SimpleUploadedFile("list.csv", rows.encode(), "text/csv"), "validation_mode": mode}
        response = owner.client.post("/v1/verify/bulk/preview", data=data, headers=owner.auth({}))
        assert response.status_code == 200, response.content
        assert response.json()["estimated_seconds"] == expected
