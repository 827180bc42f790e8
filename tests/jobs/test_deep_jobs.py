"""Bulk deep jobs (validation_mode=deep on upload and preview) against the MX farm, tasks in sync mode."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django_q.models import Schedule

from jobs import chunk_runs, deep_slots, tasks, worker
from jobs.models import Chunk, Job
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks, ledger_sum
from tests.support.bulk_jobs import a_minute_later, bulk_net, csv_of, deep_upload, download, job_body
from tests.support.dns_server import NXDOMAIN, Behaviour, DnsServer
from tests.support.mx_farm import MxFarm
from tests.support.portal import logged_in
from verification.engine.smtp_slots import lock_slot

ROWS = [
    "alice@mailbox.deepfarm.net",  # valid
    "nobody@mailbox.deepfarm.net",  # invalid, mailbox_not_found
    "gone@mailbox.deepfarm.net",  # invalid, mailbox_disabled
    "whoever@anything.deepfarm.net",  # risky, catch_all
    "alice@listed.deepfarm.net",  # unknown, smtp_blocked
    "x@nullmx.com",  # invalid, no MX: no session
    "alice@greylist.deepfarm.net",  # greylisted at first, valid on a retry
]


@pytest.fixture(autouse=True)
def small_chunks(deep_farm: MxFarm, settings: Any) -> None:
    settings.BULK_CHUNK_SIZE = 4


def test_deep_job_asks_greylisted_rows_again_later_then_completes(
    owner: Persona, settings: Any, run_tasks: RunTasks, deep_farm: MxFarm
) -> None:
    settings.VERIFIER_SMTP_GREYLIST_RETRY_SECONDS = 1.2
    with run_tasks():
        job_id = deep_upload(owner, ROWS).json()["id"]
    assert job_body(owner, job_id)["status"] == "processing"  # one chunk waits for its retry
    waiting = Chunk.objects.get(job_id=job_id, retry_round=1)
    assert waiting.state == Chunk.State.PENDING and waiting.not_before is not None
    assert Schedule.objects.filter(name__startswith="jobs: greylist retry").count() == 1  # no worker sleeps
    deep_farm.greylist_over()  # the farm lets the greylisted senders through
    with a_minute_later(), run_tasks():  # the retry is due (the schedule would fire now)
        tasks.run_next_chunk()
    body = job_body(owner, job_id)
    assert body["status"] == "completed" and body["validation_mode"] == "deep"
    assert body["progress"] == {"total": 7, "processed": 7, "valid": 2, "invalid": 3, "risky": 1, "unknown": 1}
    breakdown = body["breakdown"]
    assert (breakdown["mailbox_not_found"], breakdown["mailbox_disabled"], breakdown["catch_all"]) == (1, 1, 1)
    assert (breakdown["smtp_blocked"], breakdown["no_mx_record"], breakdown["greylisted"]) == (1, 1, 0)
    assert bulk_net(owner, job_id) == -7  # one credit per row, the retried ones included
    owner.account.refresh_from_db()
    assert owner.account.credit_balance == 993 == ledger_sum(owner)


def test_greylisted_rows_asked_again_after_midnight_ask_the_probe_of_the_day_the_job_began(
    owner: Persona, settings: Any, run_tasks: RunTasks, deep_farm: MxFarm
) -> None:
    settings.VERIFIER_SMTP_GREYLIST_RETRY_SECONDS = 1.2
    with time_machine.travel(datetime(2026, 11, 29, 23, 59, 30, tzinfo=UTC), tick=True):
        with run_tasks():
            job_id = deep_upload(owner, ["alice@greylist.deepfarm.net"]).json()["id"]
        deep_farm.greylist_over()
        with a_minute_later(), run_tasks():  # the next day
            tasks.run_next_chunk()
    body = job_body(owner, job_id)
    assert (body["status"], body["progress"]["valid"]) == ("completed", 1)


def test_deep_result_file_fills_smtp_valid_and_is_catch_all(owner: Persona, settings: Any, run_tasks: RunTasks) -> None:
    with run_tasks():
        job_id = deep_upload(owner, ROWS[:4]).json()["id"]
    rows = download(owner, job_body(owner, job_id)["result_download_url"])
    header = rows[0]
    by_email = {row[0]: dict(zip(header, row, strict=False)) for row in rows[1:]}
    assert by_email["alice@mailbox.deepfarm.net"]["smtp_valid"] == "true"
    assert by_email["alice@mailbox.deepfarm.net"]["is_catch_all"] == "false"
    assert by_email["nobody@mailbox.deepfarm.net"]["sub_status"] == "mailbox_not_found"
    assert by_email["whoever@anything.deepfarm.net"]["is_catch_all"] == "true"


def test_greylisting_that_never_clears_ends_unknown_after_three_retries(
    owner: Persona, settings: Any, run_tasks: RunTasks
) -> None:
    settings.VERIFIER_SMTP_GREYLIST_RETRY_SECONDS = 0
    with run_tasks():
        job_id = deep_upload(owner, ["alice@probegrey.deepfarm.net"]).json()["id"]
    body = job_body(owner, job_id)
    assert body["status"] == "completed" and body["breakdown"]["greylisted"] == 1
    assert Chunk.objects.get(job_id=job_id).retry_round == 3
    assert bulk_net(owner, job_id) == -1


def test_fast_job_is_byte_for_byte_as_before_with_deep_mode_on(
    owner: Persona, outsider: Persona, settings: Any, run_tasks: RunTasks, farm: MxFarm
) -> None:
    files = []
    for persona, deep_on in ((owner, False), (outsider, True)):
        settings.VERIFIER_DEEP_MODE = deep_on
        with run_tasks():
            job_id = deep_upload(persona, [*ROWS, "jane@good.com", "info@good.com"], mode="fast").json()["id"]
        body = job_body(persona, job_id)
        assert body["validation_mode"] == "fast" and body["progress"]["valid"] == 7
        files.append(download(persona, body["result_download_url"]))
    assert files[0] == files[1]
    assert sum(farm.stats.sessions.values()) == 0


@pytest.mark.parametrize("path", ["/v1/verify/bulk", "/v1/verify/bulk/preview"])
def test_deep_upload_is_refused_while_deep_mode_is_off(owner: Persona, settings: Any, path: str) -> None:
    settings.VERIFIER_DEEP_MODE = False
    response = deep_upload(owner, ROWS, path=path)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "deep_mode_disabled"
    assert response.json()["error"]["param"] == "validation_mode"
    assert not Job.objects.exists()


@pytest.mark.parametrize("path", ["/v1/verify/bulk", "/v1/verify/bulk/preview"])
def test_unknown_validation_mode_is_invalid_request(owner: Persona, path: str) -> None:
    response = deep_upload(owner, ROWS, path=path, mode="thorough")
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid_request",
        "message": "validation_mode: 'thorough' is not one of fast, deep.",
        "param": "validation_mode",
    }
    assert not Job.objects.exists()


def test_deep_preview_answers_like_a_fast_one(owner: Persona) -> None:
    response = deep_upload(owner, ROWS, path="/v1/verify/bulk/preview")
    assert response.status_code == 200 and response.json()["unique"] == 7


def test_outsider_cannot_see_a_deep_job(owner: Persona, outsider: Persona, run_tasks: RunTasks) -> None:
    with run_tasks():
        job_id = deep_upload(owner, ROWS[:1]).json()["id"]
    assert outsider.get(f"/v1/jobs/{job_id}").status_code == 404


def test_portal_upload_offers_deep_only_when_it_is_on(owner: Persona, settings: Any) -> None:
    page = logged_in(owner).get(reverse("job-new")).content.decode()
    assert "data-mode-choice" in page and 'value="deep"' in page
    settings.VERIFIER_DEEP_MODE = False
    assert "data-mode-choice" not in logged_in(owner).get(reverse("job-new")).content.decode()


def test_portal_deep_upload_runs_and_its_page_shows_mode_and_sub_statuses(owner: Persona, run_tasks: RunTasks) -> None:
    client = logged_in(owner)
    upload_file = SimpleUploadedFile("deep.csv", csv_of(ROWS[:5]), "text/csv")
    with run_tasks():
        response = client.post(reverse("job-new"), {"file": upload_file, "validation_mode": "deep"})
    assert response.status_code == 302
    job = Job.objects.get(account=owner.account)
    assert job.validation_mode == "deep" and job.status == Job.Status.COMPLETED
    page = client.get(reverse("job", args=[job.pk])).content.decode()
    assert "Deep check: each mailbox asked of its mail server" in page
    assert "No such mailbox" in page and "Catch-all domain" in page and "Blocked by the mail server" in page


def test_fast_job_page_leaves_deep_sub_statuses_out(owner: Persona, run_tasks: RunTasks) -> None:
    with run_tasks():
        job_id = deep_upload(owner, ROWS[:2], mode="fast").json()["id"]
    page = logged_in(owner).get(reverse("job", args=[job_id])).content.decode()
    assert "Quick check: address, domain and lists" in page and "No such mailbox" not in page


def test_a_deep_chunk_judged_as_the_resolver_breaks_is_put_back_and_judged_right_later(
    owner: Persona, settings: Any, run_tasks: RunTasks, dns_server: DnsServer
) -> None:
    settings.BULK_CHUNK_SIZE, settings.BULK_DEEP_WORKERS = 2, 1  # one deep worker: cut at upload, one batch
    rows = [
        "alice@mailbox.deepfarm.net",
        "nobody@mailbox.deepfarm.net",
        "whoever@anything.deepfarm.net",
        "x@nullmx.com",
    ]
    job_id = deep_upload(owner, rows).json()["id"]
    first, second = Chunk.objects.filter(job_id=job_id).order_by("index")
    tasks.run_chunk(first.pk)  # the resolver is fine: judged and charged
    dns_server.everything = NXDOMAIN  # breaks while the finding "healthy" is still fresh
    tasks.run_chunk(second.pk)
    second.refresh_from_db()
    # Put back as a fast chunk is, not asked again as if greylisted: no retry round spent.
    assert (second.state, second.attempts, second.reserved, second.retry_round) == ("pending", 0, None, 0)
    assert bulk_net(owner, job_id) == -2
    dns_server.everything = None
    with a_minute_later(), run_tasks():
        tasks.resume_chunks()
    body = job_body(owner, job_id)
    progress = body["progress"]
    assert (body["status"], progress["valid"], progress["invalid"], progress["risky"]) == ("completed", 1, 2, 1)
    assert bulk_net(owner, job_id) == -4


def test_a_worker_without_a_deep_slot_takes_only_fast_chunks(owner: Persona, outsider: Persona, settings: Any) -> None:
    """Fair share across modes: while a machine's deep slots are all held (BULK_DEEP_WORKERS, one
    here), its other workers leave deep chunks waiting and run other customers' fast ones."""
    settings.BULK_DEEP_WORKERS = 1
    deep_id = deep_upload(owner, ROWS[:4]).json()["id"]  # tasks are not run here: its chunk waits
    fast_id = deep_upload(outsider, ["jane@good.com", "info@good.com"], mode="fast").json()["id"]
    held = lock_slot(settings.VERIFIER_SMTP_LOCK_DIR, deep_slots.DEEP_SLOTS, 1)  # another worker's
    assert held is not None
    try:
        assert worker.chunk_run_next(budget=5) == 1
        assert job_body(outsider, fast_id)["status"] == "completed"
        assert job_body(owner, deep_id)["status"] == "pending"
        assert worker.chunk_run_next(budget=5) == 0  # only deep work left: none for this worker
    finally:
        os.close(held)
    assert worker.chunk_run_next(budget=5) == 1
    assert job_body(owner, deep_id)["status"] == "completed"
    again = lock_slot(settings.VERIFIER_SMTP_LOCK_DIR, deep_slots.DEEP_SLOTS, 1)
    assert again is not None  # given back after the chunk
    os.close(again)


def test_a_deep_chunk_another_worker_claimed_is_not_replaced_by_the_jobs_next(owner: Persona, settings: Any) -> None:
    """A worker that loses the claim of a fast job's chunk takes that job's next one (jobs/chunk_runs.py);
    a deep job's chunks are handed out by its own scheduling, so the loser takes nothing."""
    settings.BULK_DEEP_WORKERS = 1  # the job is one batch, cut at upload
    job_id = deep_upload(owner, ROWS).json()["id"]  # 2 chunks of 4
    first = Chunk.objects.get(job_id=job_id, index=0).pk
    assert chunk_runs.chunk_claim(chunk_id=first) is not None
    assert chunk_runs.chunk_claim(chunk_id=first) is None
    assert Chunk.objects.get(job_id=job_id, index=1).attempts == 0


def test_a_fast_chunk_does_not_keep_the_deep_slot(owner: Persona, settings: Any, dns_server: DnsServer) -> None:
    """While a worker runs a fast chunk, another worker may take deep work: the slot is free. Seen
    from the loopback DNS server, at the moment the fast chunk's own lookup reaches it."""
    settings.BULK_DEEP_WORKERS = 1
    taken: list[int | None] = []
    answer_before = dns_server.default

    def answer(name: str) -> Behaviour:
        if name == "fast-lane-mail.com" and not taken:  # what another worker finds while this chunk runs
            taken.append(lock_slot(settings.VERIFIER_SMTP_LOCK_DIR, deep_slots.DEEP_SLOTS, 1))
        return answer_before(name)

    fast_id = deep_upload(owner, ["jane@fast-lane-mail.com"], mode="fast").json()["id"]
    dns_server.default = answer
    try:
        assert worker.chunk_run_next(budget=5) == 1
    finally:
        dns_server.default = answer_before
    assert job_body(owner, fast_id)["status"] == "completed"
    assert len(taken) == 1 and taken[0] is not None
    os.close(taken[0])


def test_an_unusable_lock_directory_stops_deep_chunks_not_fast_ones(
    owner: Persona, outsider: Persona, settings: Any, tmp_path: Any
) -> None:
    (tmp_path / "a-file").write_text("")
    settings.VERIFIER_SMTP_LOCK_DIR = str(tmp_path / "a-file" / "slots")  # mkdir fails: a file is in the way
    deep_id = deep_upload(owner, ROWS[:2]).json()["id"]
    fast_id = deep_upload(outsider, ["jane@good.com"], mode="fast").json()["id"]
    assert worker.chunk_run_next(budget=5) == 1
    assert job_body(outsider, fast_id)["status"] == "completed"
    assert job_body(owner, deep_id)["status"] == "pending"


def test_a_deep_job_with_international_rows_completes_every_row_answered(
    owner: Persona, settings: Any, run_tasks: RunTasks
) -> None:
    settings.BULK_CHUNK_SIZE = 50
    plain = [f"user{i}@mailbox.deepfarm.net" for i in range(178)] + ["alice@mailbox.deepfarm.net"]
    international = [
        *(f"jöe{i}@ascii-only.deepfarm.net" for i in range(8)),  # a server without SMTPUTF8
        *(f"ñ{i}@utf8.deepfarm.net" for i in range(6)),  # asked with SMTPUTF8
        *(f"user{i}@bücher.deepfarm.net" for i in range(6)),  # an IDNA domain
        "alice@bücher.deepfarm.net",
    ]
    rows = plain + international
    assert len(rows) == 200 and len(international) == 21
    with run_tasks():
        job_id = deep_upload(owner, rows).json()["id"]
    body = job_body(owner, job_id)
    assert body["status"] == "completed" and body["progress"]["processed"] == 200
    answered = {row[0]: row for row in download(owner, body["result_download_url"])[1:]}
    assert set(answered) == {row.lower() for row in rows}
    assert body["breakdown"]["smtp_utf8_unsupported"] == 8 and body["breakdown"]["verification_failed"] == 0
    assert answered["alice@bücher.deepfarm.net"][1] == "valid"
