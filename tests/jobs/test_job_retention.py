"""Retention per job (docs/bulk.md, "Retention"): `retention_days` at upload, from 1 to the plan's
maximum, else the account's default (the portal's Privacy page), else JOB_RETENTION_DAYS."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from jobs import tasks
from jobs.models import Job
from tests.conftest import Persona, make_persona
from tests.jobs.conftest import RunTasks
from tests.support.portal import logged_in


def submitted(persona: Persona, run_tasks: RunTasks, **parts: str) -> Any:
    with run_tasks():
        data = {"file": SimpleUploadedFile("list.csv", b"a@good.com\n", "text/csv"), **parts}
        return persona.client.post("/v1/verify/bulk", data=data, headers=persona.auth({}))


def retention_of(persona: Persona, job_id: str) -> int:
    return int(persona.get(f"/v1/jobs/{job_id}").json()["retention_days"])


def test_a_job_asked_to_keep_its_files_3_days_loses_them_after_3_days(owner: Persona, run_tasks: RunTasks) -> None:
    job_id = submitted(owner, run_tasks, retention_days="3").json()["id"]
    other = submitted(owner, run_tasks).json()["id"]
    assert (retention_of(owner, job_id), retention_of(owner, other)) == (3, 30)
    with time_machine.travel(timezone.now() + timedelta(days=2, hours=23)):
        assert tasks.expire_job_files() == 0
    with time_machine.travel(timezone.now() + timedelta(days=3, minutes=1)):
        assert tasks.expire_job_files() == 1
    assert Job.objects.get(pk=job_id).files_expired_at and not Job.objects.get(pk=other).files_expired_at


@pytest.mark.parametrize("days", ["0", "31", "abc", "2.5", "-1"])
def test_retention_outside_1_to_the_plans_maximum_is_refused_and_makes_no_job(
    owner: Persona, run_tasks: RunTasks, days: str
) -> None:
    response = submitted(owner, run_tasks, retention_days=days)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"
    assert response.json()["error"]["param"] == "retention_days"
    assert "from 1 to 30 on this plan" in response.json()["error"]["message"] and not Job.objects.exists()


def test_a_larger_plan_keeps_files_longer(db: None, run_tasks: RunTasks) -> None:
    pro = make_persona(plan_code="pro", credits=100)
    assert retention_of(pro, submitted(pro, run_tasks, retention_days="90").json()["id"]) == 90
    assert submitted(pro, run_tasks, retention_days="91").status_code == 400


def test_the_accounts_default_set_on_the_privacy_page_applies_to_new_jobs(owner: Persona, run_tasks: RunTasks) -> None:
    client = logged_in(owner)
    assert client.post(reverse("privacy-retention"), {"job_retention_days": "31"}).status_code == 400
    assert client.post(reverse("privacy-retention"), {"job_retention_days": "7"}).status_code == 302
    assert retention_of(owner, submitted(owner, run_tasks).json()["id"]) == 7
    assert retention_of(owner, submitted(owner, run_tasks, retention_days="2").json()["id"]) == 2
    client.post(reverse("privacy-retention"), {"job_retention_days": ""})
    assert retention_of(owner, submitted(owner, run_tasks).json()["id"]) == 30


def test_the_same_idempotency_key_with_another_retention_is_a_different_request(
    owner: Persona, run_tasks: RunTasks
) -> None:
    with run_tasks():
        data = {"file": SimpleUploadedFile("list.csv", b"a@good.com\n", "text/csv"), "retention_days": "4"}
        again = owner.client.post("/v1/verify/bulk", data=data, headers=owner.auth({"Idempotency-Key": "k"}))
        replay = owner.client.post(
            "/v1/verify/bulk",
            data={"file": SimpleUploadedFile("list.csv", b"a@good.com\n", "text/csv"), "retention_days": "5"},
            headers=owner.auth({"Idempotency-Key": "k"}),
        )
    assert again.status_code == 202
    assert replay.status_code == 422 and replay.json()["error"]["code"] == "idempotency_key_reused"
