"""Bulk jobs run chunk by chunk in workers (django-q2 in sync mode): counts, credits, results, leases, crashes."""

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
from jobs.models import CallbackDelivery, Chunk, Job
from jobs.result_rows import RESULT_COLUMNS
from tests.conftest import Persona, make_persona
from tests.jobs.conftest import Receiver, RunTasks, crash_chunk_repeatedly, ledger_sum, stored_files, upload
from tests.support.bulk_jobs import bulk_net, csv_of, download, job_body

MIXED = [
    "Jane@good.com",  # valid
    "x@nullmx.com",  # invalid, no MX
    "info@good.com",  # risky, role
    "y@silent.com",  # unknown, DNS timeout
    "not-an-address",  # invalid syntax
    "=1+2@good.com",  # valid (= and + are allowed in a local part), escaped in the result
    "@cmd",  # escaped too
    "joe@good.com",  # valid
]


def mixed_job(owner: Persona, settings: Any, run_tasks: RunTasks) -> str:
    """The MIXED list, run to the end in chunks of three; its job id."""
    settings.BULK_CHUNK_SIZE = 3
    with run_tasks():
        return str(upload(owner, csv_of(MIXED)).json()["id"])


def test_job_completes_with_exact_counts_and_one_credit_per_row(
    owner: Persona, settings: Any, run_tasks: RunTasks
) -> None:
    job_id = mixed_job(owner, settings, run_tasks)
    body = job_body(owner, job_id)
    assert body["status"] == "completed"
    assert body["progress"] == {"total": 8, "processed": 8, "valid": 3, "invalid": 3, "risky": 1, "unknown": 1}
    assert body["partial"] is False
    assert body["started_at"].endswith("Z") and body["completed_at"].endswith("Z")
    assert bulk_net(owner, job_id) == -8
    owner.account.refresh_from_db()
    assert owner.account.credit_balance == 992 == ledger_sum(owner)


def test_result_file_has_every_row_in_upload_order_with_formulas_escaped(
    owner: Persona, settings: Any, run_tasks: RunTasks
) -> None:
    job_id = mixed_job(owner, settings, run_tasks)
    rows = download(owner, job_body(owner, job_id)["result_download_url"])
    assert tuple(rows[0]) == RESULT_COLUMNS
    assert [r[0] for r in rows[1:]] == [
        "jane@good.com",
        "x@nullmx.com",
        "info@good.com",
        "y@silent.com",
        "not-an-address",
        "'=1+2@good.com",
        "'@cmd",
        "joe@good.com",
    ]
    jane = dict(zip(RESULT_COLUMNS, rows[1], strict=True))
    assert jane == {
        "email": "jane@good.com",
        "status": "valid",
        "sub_status": "",
        "is_valid": "true",
        "confidence": "high",
        "score": "85",
        "syntax_valid": "true",
        "domain_valid": "true",
        "mx_found": "true",
        "smtp_valid": "",
        "is_disposable": "false",
        "is_role_based": "false",
        "is_catch_all": "",
        "is_free_provider": "false",
        "did_you_mean": "",
        "mail_provider": "",
        "deliverability": "",
        "deliverability_basis": "",
        "feedback": "",
        "reason": "",
    }


def test_address_of_1000_characters_is_invalid_syntax(owner: Persona, run_tasks: RunTasks) -> None:
    with run_tasks():
        job_id = upload(owner, csv_of(["a" * 990 + "@good.com"])).json()["id"]
    rows = download(owner, job_body(owner, job_id)["result_download_url"])
    assert len(rows[1][0]) == 999
    assert (rows[1][1], rows[1][2]) == ("invalid", "invalid_syntax")


def test_credits_running_out_completes_a_partial_job(
    db: None, settings: Any, run_tasks: RunTasks, receiver: Receiver
) -> None:
    settings.BULK_CHUNK_SIZE = 2
    poor = make_persona(plan_code="starter", credits=3)
    addresses = [f"user{i}@good.com" for i in range(7)]
    with run_tasks():
        job_id = upload(poor, csv_of(addresses), callback_url=receiver.url).json()["id"]
    body = job_body(poor, job_id)
    assert (body["status"], body["partial"]) == ("completed", True)
    assert body["progress"]["processed"] == 3 < body["progress"]["total"] == 7
    rows = download(poor, body["result_download_url"])
    assert [r[0] for r in rows[1:]] == addresses[:3]
    assert bulk_net(poor, job_id) == -3
    poor.account.refresh_from_db()
    assert poor.account.credit_balance == 0 == ledger_sum(poor)
    (callback,) = receiver.received
    assert callback.json()["partial"] is True
    assert (callback.json()["processed"], callback.json()["total"]) == (3, 7)


def test_running_a_done_chunk_again_charges_and_writes_nothing(owner: Persona, media: Path) -> None:
    job_id = upload(owner, csv_of(["a@good.com", "b@good.com"])).json()["id"]
    chunk = Chunk.objects.get(job_id=job_id)
    tasks.run_chunk(chunk.pk)
    entries, files = LedgerEntry.objects.count(), sorted(stored_files(media))
    tasks.run_chunk(chunk.pk)
    assert LedgerEntry.objects.count() == entries
    assert sorted(stored_files(media)) == files
    assert Job.objects.get(pk=job_id).processed == 2


def test_chunk_whose_worker_died_is_requeued_after_its_lease(
    owner: Persona, settings: Any, run_tasks: RunTasks
) -> None:
    settings.BULK_CHUNK_LEASE_SECONDS = 60
    job_id = upload(owner, csv_of(["a@good.com", "b@good.com"])).json()["id"]
    chunk = Chunk.objects.get(job_id=job_id)
    # Simulate a worker that claimed the chunk (and its credits) and was then killed.
    assert chunk_claim(chunk_id=chunk.pk) is not None
    assert tasks.requeue_stale_chunks() == 0
    with time_machine.travel(timezone.now() + timedelta(seconds=61)), run_tasks():
        assert tasks.requeue_stale_chunks() == 1
    chunk.refresh_from_db()
    assert (chunk.state, chunk.attempts) == ("done", 2)
    assert Job.objects.get(pk=job_id).status == "completed"


def test_chunk_that_crashed_three_times_fails_the_job_and_releases_credits(
    owner: Persona, settings: Any, receiver: Receiver, run_tasks: RunTasks
) -> None:
    settings.BULK_CHUNK_SIZE = 2
    job_id = upload(owner, csv_of(["a@good.com", "b@good.com", "c@good.com"]), callback_url=receiver.url).json()["id"]
    first, second = Chunk.objects.filter(job_id=job_id)
    tasks.run_chunk(second.pk)
    with time_machine.travel(crash_chunk_repeatedly(first.pk)), run_tasks():
        tasks.run_chunk(first.pk)
    job = Job.objects.get(pk=job_id)
    assert (job.status, job.processed) == ("failed", 1)
    assert bulk_net(owner, job_id) == -1
    owner.account.refresh_from_db()
    assert owner.account.credit_balance == 999 == ledger_sum(owner)
    (callback,) = receiver.received
    assert callback.json() == {
        "event": "bulk.failed",
        "job_id": job_id,
        "status": "failed",
        "partial": False,
        "total": 3,
        "processed": 1,
        "valid": 1,
        "invalid": 0,
        "risky": 0,
        "unknown": 0,
        "result_url": None,
        "event_id": CallbackDelivery.objects.get().event_id,
    }
    assert CallbackDelivery.objects.get().state == "delivered"


def test_requeue_schedule_runs_every_minute(db: None) -> None:
    schedule = Schedule.objects.get(func="jobs.tasks.requeue_stale_chunks")
    assert (schedule.schedule_type, schedule.minutes, schedule.repeats) == (Schedule.MINUTES, 1, -1)
