"""Staff retry a failed job and cancel a running one, as services and as admin actions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.test import Client
from django.urls import reverse

from billing.models import LedgerEntry
from jobs import tasks
from jobs.chunk_runs import chunk_claim, chunk_finish
from jobs.lifecycle import CANCELLED_BY_STAFF, job_cancel, job_fail, job_retry
from jobs.models import Chunk, Job
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks, crash_chunk_repeatedly, ledger_sum, upload

THREE = b"a@good.com\nb@good.com\nc@good.com\n"


@pytest.fixture
def two_chunks(settings: Any) -> None:
    settings.BULK_CHUNK_SIZE = 2


def balance(persona: Persona) -> int:
    persona.account.refresh_from_db()
    assert persona.account.credit_balance == ledger_sum(persona)
    return persona.account.credit_balance


def run_action(client: Client, action: str, job_ids: list[str]) -> Any:
    data = {"action": action, ACTION_CHECKBOX_NAME: job_ids}
    return client.post(reverse("admin:jobs_job_changelist"), data, follow=True)


def test_cancel_fails_the_job_and_releases_its_reservations(owner: Persona, two_chunks: None) -> None:
    job_id = upload(owner, THREE).json()["id"]
    first, second = Chunk.objects.filter(job_id=job_id)
    tasks.run_chunk(first.pk)
    assert chunk_claim(chunk_id=second.pk) is not None  # a worker holds one credit for the last row
    assert balance(owner) == 997
    assert job_cancel(job_id=job_id)
    job = Job.objects.get(pk=job_id)
    assert (job.status, job.failure_reason, job.processed) == ("failed", CANCELLED_BY_STAFF, 2)
    assert balance(owner) == 998


def test_chunk_task_after_cancel_does_nothing_and_charges_nothing(owner: Persona, two_chunks: None) -> None:
    job_id = upload(owner, THREE).json()["id"]
    job_cancel(job_id=job_id)
    entries = LedgerEntry.objects.count()
    for chunk_id in Chunk.objects.filter(job_id=job_id).values_list("pk", flat=True):
        tasks.run_chunk(chunk_id)
    assert LedgerEntry.objects.count() == entries and balance(owner) == 1000
    assert Job.objects.get(pk=job_id).processed == 0
    assert set(Chunk.objects.filter(job_id=job_id).values_list("state", flat=True)) == {"cancelled"}


def test_chunk_running_during_cancel_does_not_count(owner: Persona) -> None:
    job_id = upload(owner, THREE).json()["id"]
    chunk = chunk_claim(chunk_id=Chunk.objects.get(job_id=job_id).pk)
    assert chunk is not None
    job_cancel(job_id=job_id)
    assert not chunk_finish(chunk=chunk, verdicts=[], part_name="")
    assert balance(owner) == 1000 and Job.objects.get(pk=job_id).processed == 0


def test_cancel_leaves_a_finished_job_alone(owner: Persona, run_tasks: RunTasks) -> None:
    with run_tasks():
        job_id = upload(owner, THREE).json()["id"]
    assert not job_cancel(job_id=job_id)
    assert Job.objects.get(pk=job_id).status == "completed"


def test_retry_requeues_undone_chunks_with_attempts_reset(
    owner: Persona, two_chunks: None, run_tasks: RunTasks
) -> None:
    job_id = upload(owner, THREE).json()["id"]
    first, second = Chunk.objects.filter(job_id=job_id)
    tasks.run_chunk(first.pk)
    with time_machine.travel(crash_chunk_repeatedly(second.pk)):
        tasks.run_chunk(second.pk)  # the fourth claim gives up and fails the job
    assert Job.objects.get(pk=job_id).status == "failed"
    with run_tasks():
        assert job_retry(job_id=job_id)
        second.refresh_from_db()
        assert (second.state, second.attempts, second.reserved) == ("pending", 0, None)
    job = Job.objects.get(pk=job_id)
    assert (job.status, job.processed, job.failure_reason) == ("completed", 3, "")
    assert balance(owner) == 997


def test_retry_leaves_a_job_that_did_not_fail_alone(owner: Persona) -> None:
    job_id = upload(owner, THREE).json()["id"]
    assert not job_retry(job_id=job_id)
    assert Job.objects.get(pk=job_id).status == "pending"


def test_admin_cancel_action(admin_client_: Client, owner: Persona) -> None:
    job_id = upload(owner, THREE).json()["id"]
    response = run_action(admin_client_, "cancel_jobs", [job_id])
    assert "Cancelled 1 job(s)." in response.content.decode()
    assert Job.objects.get(pk=job_id).failure_reason == CANCELLED_BY_STAFF


def test_admin_retry_action_skips_jobs_that_did_not_fail(
    admin_client_: Client, owner: Persona, run_tasks: RunTasks, media: Path
) -> None:
    failed = upload(owner, THREE).json()["id"]
    pending = upload(owner, b"d@good.com\n").json()["id"]
    job_fail(job_id=failed, reason="The uploaded file could not be read.")
    with run_tasks():
        response = run_action(admin_client_, "retry_jobs", [failed, pending])
    page = response.content.decode()
    assert "Retried 1 job(s)." in page and "Skipped 1" in page
    assert Job.objects.get(pk=failed).status == "completed"


def test_admin_job_list_shows_progress_and_account(admin_client_: Client, owner: Persona) -> None:
    upload(owner, THREE)
    page = admin_client_.get(reverse("admin:jobs_job_changelist")).content.decode()
    assert "0 / 3 (0%)" in page and owner.account.owner.email in page


def test_callback_deliveries_are_read_only_in_the_admin(admin_client_: Client) -> None:
    assert admin_client_.get(reverse("admin:jobs_callbackdelivery_changelist")).status_code == 200
    assert admin_client_.get(reverse("admin:jobs_callbackdelivery_add")).status_code == 403
