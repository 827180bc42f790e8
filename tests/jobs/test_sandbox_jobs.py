"""Test keys' bulk jobs: the same workers and callbacks, sandbox answers, no credit; live and test never meet."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from standardwebhooks.webhooks import Webhook

from billing.models import LedgerEntry
from jobs.models import Job
from tests.conftest import Persona, make_persona, sandboxed
from tests.jobs.conftest import Receiver, RunTasks, upload

SANDBOX_LIST = b"email\nvalid@sandbox.example\ninvalid@sandbox.example\ncatchall@sandbox.example\nnot-an-address\n"


def finished_test_job(owner: Persona, run_tasks: RunTasks, **kwargs: Any) -> tuple[Persona, str]:
    sandbox = sandboxed(owner)
    with run_tasks():
        response = upload(sandbox, SANDBOX_LIST, **kwargs)
    assert response.status_code == 202, response.content
    return sandbox, response.json()["id"]


def test_a_test_job_runs_through_the_workers_with_sandbox_answers(owner: Persona, run_tasks: RunTasks) -> None:
    sandbox, job_id = finished_test_job(owner, run_tasks)
    job = sandbox.get(f"/v1/jobs/{job_id}").json()
    progress = job["progress"]
    assert (job["status"], progress["processed"], progress["valid"], progress["invalid"], progress["risky"]) == (
        "completed",
        4,
        1,
        2,
        1,
    )
    assert (job["breakdown"]["mailbox_not_found"], job["breakdown"]["catch_all"]) == (1, 1)
    rows = list(
        csv.DictReader(io.StringIO(b"".join(sandbox.client.get(job["result_download_url"]).streaming_content).decode()))
    )
    assert [(r["email"], r["sub_status"]) for r in rows] == [
        ("valid@sandbox.example", ""),
        ("invalid@sandbox.example", "mailbox_not_found"),
        ("catchall@sandbox.example", "catch_all"),
        ("not-an-address", "invalid_syntax"),
    ]


def test_a_test_job_costs_nothing_and_writes_no_ledger_entry(owner: Persona, run_tasks: RunTasks) -> None:
    before = LedgerEntry.objects.filter(account=owner.account).count()
    finished_test_job(owner, run_tasks)
    owner.account.refresh_from_db()
    assert owner.account.credit_balance == 1000
    assert LedgerEntry.objects.filter(account=owner.account).count() == before


def test_a_test_job_runs_with_a_zero_balance(db: None, run_tasks: RunTasks) -> None:
    broke = make_persona(plan_code="starter", credits=0)
    _, job_id = finished_test_job(broke, run_tasks)
    assert Job.objects.get(pk=job_id).processed == 4
    assert upload(broke, SANDBOX_LIST).status_code == 402


def test_a_test_key_on_the_free_plan_is_refused_bulk_as_a_live_one(db: None) -> None:
    free = make_persona(plan_code="free", credits=100)
    response = upload(sandboxed(free), SANDBOX_LIST)
    assert (response.status_code, response.json()["error"]["code"]) == (403, "plan_upgrade_required")


def test_a_test_job_sends_a_real_signed_callback(owner: Persona, run_tasks: RunTasks, receiver: Receiver) -> None:
    _, job_id = finished_test_job(owner, run_tasks, callback_url=receiver.url)
    (received,) = receiver.received
    payload = Webhook(owner.account.signing_secret).verify(received.body, dict(received.headers))
    assert (payload["job_id"], payload["event"], payload["processed"]) == (job_id, "bulk.completed", 4)


def test_a_live_key_never_sees_a_test_job(owner: Persona, run_tasks: RunTasks) -> None:
    _, job_id = finished_test_job(owner, run_tasks)
    assert owner.get(f"/v1/jobs/{job_id}").status_code == 404
    assert owner.get(f"/v1/jobs/{job_id}/results").status_code == 404
    assert owner.get("/v1/jobs").json()["data"] == []
    assert owner.get(f"/v1/jobs?starting_after={job_id}").status_code == 400
    assert owner.client.delete(f"/v1/jobs/{job_id}", headers=owner.auth({})).status_code == 404
    assert Job.objects.filter(pk=job_id).exists()


def test_a_test_key_never_sees_a_live_job(owner: Persona, run_tasks: RunTasks) -> None:
    with run_tasks():
        job_id = upload(owner, b"a@good.com\n").json()["id"]
    sandbox = sandboxed(owner)
    assert sandbox.get(f"/v1/jobs/{job_id}").status_code == 404
    assert sandbox.get(f"/v1/jobs/{job_id}/results").status_code == 404
    assert sandbox.get("/v1/jobs").json()["data"] == []
    assert sandbox.client.delete(f"/v1/jobs/{job_id}", headers=sandbox.auth({})).status_code == 404
    assert Job.objects.filter(pk=job_id).exists()


def test_each_key_lists_only_its_own_modes_jobs(owner: Persona, run_tasks: RunTasks) -> None:
    sandbox, test_job = finished_test_job(owner, run_tasks)
    with run_tasks():
        live_job = upload(owner, b"a@good.com\n").json()["id"]
    assert [job["id"] for job in owner.get("/v1/jobs").json()["data"]] == [live_job]
    assert [job["id"] for job in sandbox.get("/v1/jobs").json()["data"]] == [test_job]


def test_a_test_key_deletes_its_own_test_job(owner: Persona, run_tasks: RunTasks) -> None:
    sandbox, job_id = finished_test_job(owner, run_tasks)
    assert sandbox.client.delete(f"/v1/jobs/{job_id}", headers=sandbox.auth({})).status_code == 204
    assert not Job.objects.filter(pk=job_id).exists()


def test_another_accounts_test_key_sees_nothing(owner: Persona, outsider: Persona, run_tasks: RunTasks) -> None:
    _, job_id = finished_test_job(owner, run_tasks)
    assert sandboxed(outsider).get(f"/v1/jobs/{job_id}").status_code == 404


def test_the_portal_shows_live_jobs_only(owner: Persona, run_tasks: RunTasks) -> None:
    _, job_id = finished_test_job(owner, run_tasks)
    owner.client.force_login(owner.account.owner)
    assert job_id not in owner.client.get(reverse("jobs")).content.decode()
    assert owner.client.get(reverse("job", args=[job_id])).status_code == 404


@pytest.mark.parametrize("mode", ["live", "test"])
def test_the_portal_creates_live_and_test_keys(owner: Persona, mode: str) -> None:
    owner.client.force_login(owner.account.owner)
    page = owner.client.post(reverse("keys"), {"name": f"{mode} key", "mode": mode}).content.decode()
    key = owner.account.api_keys.get(name=f"{mode} key")
    assert key.key_mode == mode and f"ev_{mode}_" in page


@pytest.mark.parametrize("path", ["/v1/verify/bulk", "/v1/verify/bulk/preview"])
def test_a_test_key_may_ask_deep_before_deep_mode_is_on_a_live_key_may_not(
    owner: Persona, settings: Any, run_tasks: RunTasks, path: str
) -> None:
    """As for single verification: the sandbox opens no SMTP session (README, Test keys)."""
    settings.VERIFIER_DEEP_MODE = False

    def post(persona: Persona) -> Any:
        data = {"file": SimpleUploadedFile("list.csv", SANDBOX_LIST, "text/csv"), "validation_mode": "deep"}
        return persona.client.post(path, data=data, headers=persona.auth({}))

    refused = post(owner)
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, "deep_mode_disabled")
    sandbox = sandboxed(owner)
    with run_tasks():
        accepted = post(sandbox)
    assert accepted.status_code in (200, 202), accepted.content
    if path.endswith("/bulk"):
        job = sandbox.get(f"/v1/jobs/{accepted.json()['id']}").json()
        assert (job["status"], job["validation_mode"], job["progress"]["processed"]) == ("completed", "deep", 4)
