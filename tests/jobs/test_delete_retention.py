"""DELETE /v1/jobs/{id} and JOB_RETENTION_DAYS (docs/bulk.md)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import time_machine
from django.utils import timezone
from django_q.models import Schedule

from billing.models import LedgerEntry
from jobs import tasks
from jobs.chunk_runs import chunk_claim
from jobs.models import CallbackDelivery, Job
from tests.conftest import Persona
from tests.jobs.conftest import Receiver, RunTasks, ledger_sum, stored_files, upload
from tests.support.portal import logged_in


def delete(persona: Persona, job_id: str) -> Any:
    return persona.client.delete(f"/v1/jobs/{job_id}", headers=persona.auth({}))


def completed(persona: Persona, run_tasks: RunTasks) -> dict[str, Any]:
    with run_tasks():
        job_id = upload(persona, b"a@good.com\nb@nullmx.com\n").json()["id"]
    return persona.get(f"/v1/jobs/{job_id}").json()


def test_deleted_job_is_404_everywhere_and_its_files_are_gone(owner: Persona, run_tasks: RunTasks, media: Path) -> None:
    job = completed(owner, run_tasks)
    link = job["result_download_url"].removeprefix("http://testserver")
    assert delete(owner, job["id"]).status_code == 204
    assert owner.get(f"/v1/jobs/{job['id']}").status_code == 404
    assert owner.client.get(f"/v1/jobs/{job['id']}/results", headers=owner.auth({})).status_code == 404
    assert owner.client.get(link).status_code == 404
    assert logged_in(owner).get(f"/jobs/{job['id']}").status_code == 404
    assert stored_files(media) == []
    assert delete(owner, job["id"]).status_code == 404


def test_deleting_keeps_the_ledger(owner: Persona, run_tasks: RunTasks) -> None:
    job = completed(owner, run_tasks)
    entries = LedgerEntry.objects.filter(account=owner.account).count()
    delete(owner, job["id"])
    assert LedgerEntry.objects.filter(account=owner.account).count() == entries


def test_deleting_a_running_job_releases_its_reservations_and_sends_no_callback(
    owner: Persona, receiver: Receiver
) -> None:
    before = ledger_sum(owner)
    job_id = upload(owner, b"a@good.com\nb@good.com\n", callback_url=receiver.url).json()["id"]
    chunk = chunk_claim(chunk_id=Job.objects.get(pk=job_id).chunks.get().pk)
    assert chunk is not None and ledger_sum(owner) == before - 2
    assert delete(owner, job_id).status_code == 204
    tasks.run_chunk(chunk.pk)  # its worker goes on: it finds nothing to finish
    owner.account.refresh_from_db()
    assert ledger_sum(owner) == before == owner.account.credit_balance
    assert receiver.received == [] and CallbackDelivery.objects.count() == 0


def test_retention_deletes_a_finished_jobs_files_after_the_set_days(
    owner: Persona, run_tasks: RunTasks, media: Path, settings: Any
) -> None:
    settings.JOB_RETENTION_DAYS = 30
    job = completed(owner, run_tasks)
    with time_machine.travel(timezone.now() + timedelta(days=29, hours=23)):
        assert tasks.expire_job_files() == 0
    with time_machine.travel(timezone.now() + timedelta(days=30, minutes=1)):
        assert tasks.expire_job_files() == 1
        body = owner.get(f"/v1/jobs/{job['id']}").json()
        expired = owner.client.get(f"/v1/jobs/{job['id']}/results", headers=owner.auth({}))
    assert (body["status"], body["result_download_url"]) == ("completed", None)
    assert (expired.status_code, expired.json()["error"]["code"]) == (410, "results_expired")
    assert stored_files(media) == []


def test_retention_leaves_unfinished_jobs_alone(owner: Persona, media: Path) -> None:
    upload(owner, b"a@good.com\n")
    kept = stored_files(media)
    with time_machine.travel(timezone.now() + timedelta(days=365)):
        assert tasks.expire_job_files() == 0
    assert stored_files(media) == kept != []


def test_retention_runs_hourly(db: None) -> None:
    assert Schedule.objects.get(func="jobs.tasks.expire_job_files").minutes == 60


def test_a_job_deleted_through_the_api_is_in_the_audit_log_by_its_key(owner: Persona, run_tasks: RunTasks) -> None:
    job_id = upload(owner, b"a@good.com\n").json()["id"]
    owner.client.delete(f"/v1/jobs/{job_id}", headers=owner.auth({}))
    event = owner.account.audit_events.get(action="job_deleted")
    key = owner.account.api_keys.get()
    assert (event.who, event.detail, event.ip) == (f"API key {key.prefix}…", job_id, "127.0.0.1")


def test_a_job_deleted_in_the_portal_is_in_the_audit_log_by_its_member(owner: Persona, run_tasks: RunTasks) -> None:
    job_id = upload(owner, b"a@good.com\n", name="crm.csv").json()["id"]
    logged_in(owner).post(f"/jobs/{job_id}/delete")
    event = owner.account.audit_events.get(action="job_deleted")
    assert (event.who, event.detail) == (owner.account.email, f"{job_id} (crm.csv)")
