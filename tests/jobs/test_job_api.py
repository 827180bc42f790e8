"""GET /v1/jobs/{id}, GET /v1/jobs and the result download link."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import time_machine
from django.utils import timezone

from jobs.models import BREAKDOWN_KEYS, Job
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks, upload
from verification.engine.providers import PROVIDERS


def completed_job(persona: Persona, run_tasks: RunTasks) -> dict[str, Any]:
    with run_tasks():
        job_id = upload(persona, b"a@good.com\nb@nullmx.com\n").json()["id"]
    return persona.get(f"/v1/jobs/{job_id}").json()


def test_pending_job_has_null_timestamps_and_no_download(owner: Persona) -> None:
    job_id = upload(owner, b"a@good.com\n", callback_url="https://93.184.215.14/hook").json()["id"]
    body = owner.get(f"/v1/jobs/{job_id}").json()
    created = Job.objects.get(pk=job_id).created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert body == {
        "id": job_id,
        "filename": "list.csv",
        "status": "pending",
        "waiting_for": None,
        "validation_mode": "fast",
        "progress": {"total": 1, "processed": 0, "valid": 0, "invalid": 0, "risky": 0, "unknown": 0},
        "partial": False,
        "breakdown": {**dict.fromkeys(BREAKDOWN_KEYS, 0), "mail_provider": dict.fromkeys(PROVIDERS, 0)},
        "credits_refunded": 0,
        "result_download_url": None,
        "callback_url": "https://93.184.215.14/hook",
        "retention_days": 30,
        "created_at": created,
        "started_at": None,
        "completed_at": None,
    }


def test_download_link_serves_only_the_job_it_was_issued_for(
    owner: Persona, outsider: Persona, run_tasks: RunTasks
) -> None:
    mine = completed_job(owner, run_tasks)["result_download_url"]
    theirs = completed_job(outsider, run_tasks)["result_download_url"]
    token = theirs.rsplit("/", 1)[1]
    job_id, rest = token.split(":", 1)
    forged = mine.rsplit("/", 1)[0] + "/" + mine.rsplit("/", 1)[1].split(":", 1)[0] + ":" + rest
    assert job_id != forged.rsplit("/", 1)[1].split(":", 1)[0]
    response = outsider.client.get(forged.removeprefix("http://testserver"))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_download_link_expires_after_an_hour(owner: Persona, run_tasks: RunTasks) -> None:
    path = completed_job(owner, run_tasks)["result_download_url"].removeprefix("http://testserver")
    with time_machine.travel(timezone.now() + timedelta(minutes=59)):
        assert owner.client.get(path).status_code == 200
    with time_machine.travel(timezone.now() + timedelta(minutes=61)):
        response = owner.client.get(path)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_tampered_download_link_is_404(owner: Persona, run_tasks: RunTasks) -> None:
    path = completed_job(owner, run_tasks)["result_download_url"].removeprefix("http://testserver")
    response = owner.client.get(path[:-1] + ("A" if path[-1] != "A" else "B"))
    assert response.status_code == 404


def test_each_read_issues_a_fresh_link(owner: Persona, run_tasks: RunTasks) -> None:
    job = completed_job(owner, run_tasks)
    with time_machine.travel(timezone.now() + timedelta(minutes=30)):
        again = owner.get(f"/v1/jobs/{job['id']}").json()["result_download_url"]
    assert again != job["result_download_url"]
    assert job["result_download_url"].startswith("http://testserver/v1/results/")


def make_jobs(persona: Persona, count: int) -> list[str]:
    ids = []
    start = timezone.now()
    for i in range(count):
        with time_machine.travel(start + timedelta(seconds=i), tick=False):
            ids.append(upload(persona, f"user{i}@good.com\n".encode()).json()["id"])
    return ids[::-1]  # newest first


def test_list_is_newest_first_and_pages_with_starting_after(owner: Persona, outsider: Persona) -> None:
    newest_first = make_jobs(owner, 5)
    upload(outsider, b"x@good.com\n")
    page = owner.get("/v1/jobs?limit=2").json()
    assert ([j["id"] for j in page["data"]], page["has_more"]) == (newest_first[:2], True)
    page = owner.get(f"/v1/jobs?limit=2&starting_after={newest_first[1]}").json()
    assert ([j["id"] for j in page["data"]], page["has_more"]) == (newest_first[2:4], True)
    page = owner.get(f"/v1/jobs?limit=2&starting_after={newest_first[3]}").json()
    assert ([j["id"] for j in page["data"]], page["has_more"]) == (newest_first[4:], False)


def test_list_defaults_to_20(owner: Persona) -> None:
    make_jobs(owner, 21)
    page = owner.get("/v1/jobs").json()
    assert (len(page["data"]), page["has_more"]) == (20, True)


def test_list_with_bad_limit_is_400(owner: Persona) -> None:
    for limit in ("0", "101", "x"):
        response = owner.get(f"/v1/jobs?limit={limit}")
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_request"
        assert response.json()["error"]["param"] == "limit"


def test_list_with_unknown_or_foreign_starting_after_is_400(owner: Persona, outsider: Persona) -> None:
    foreign = upload(outsider, b"x@good.com\n").json()["id"]
    for cursor in ("job_nope", foreign):
        response = owner.get(f"/v1/jobs?starting_after={cursor}")
        assert response.status_code == 400
        assert response.json()["error"]["param"] == "starting_after"
