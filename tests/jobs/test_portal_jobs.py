"""The portal's job pages: upload, job page with its polled progress, download, list, dashboard."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from jobs.csvfile import MAX_UPLOAD_BYTES
from jobs.models import CallbackAttempt, CallbackDelivery, Job
from tests.conftest import Persona, make_persona
from tests.jobs.conftest import Receiver, RunTasks, stored_files, upload
from tests.support.portal import logged_in

JOB_PAGES = ["job", "job-progress", "job-download"]


def post_upload(client: Client, content: bytes, callback_url: str = "") -> object:
    data = {"file": SimpleUploadedFile("list.csv", content, "text/csv"), "callback_url": callback_url}
    return client.post(reverse("job-new"), data)


def stored_job(persona: Persona) -> str:
    """A job row only (the API's rate limit would refuse many uploads in a row)."""
    return Job.objects.create(account=persona.account, input_name="unused.csv", total=1).pk


def finished_job(owner: Persona, run_tasks: RunTasks, content: bytes = b"a@good.com\nb@nowhere.invalid\n") -> Job:
    with run_tasks():
        job_id = upload(owner, content).json()["id"]
    return Job.objects.get(pk=job_id)


@pytest.mark.parametrize("name", ["jobs", "job-new"])
def test_anonymous_visitor_is_sent_to_log_in_from_job_pages(db: None, name: str) -> None:
    url = reverse(name)
    assert Client().get(url)["Location"] == f"{reverse('login')}?next={url}"


@pytest.mark.parametrize("name", JOB_PAGES)
def test_anonymous_visitor_is_sent_to_log_in_from_a_job(owner: Persona, name: str) -> None:
    job_id = upload(owner, b"a@good.com\n").json()["id"]
    assert Client().get(reverse(name, args=[job_id])).status_code == 302


@pytest.mark.parametrize("name", JOB_PAGES)
def test_outsider_gets_404_for_the_owners_job(
    owner: Persona, outsider: Persona, run_tasks: RunTasks, name: str
) -> None:
    job = finished_job(owner, run_tasks)
    assert logged_in(outsider).get(reverse(name, args=[job.pk])).status_code == 404


def test_upload_page_states_the_limits(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("job-new")).content.decode()
    assert "25 MiB" in page and "100,000" in page and "Starter plan or above" in page
    assert "data-dropzone" in page and 'type="file"' in page


def test_every_aria_describedby_on_the_upload_page_names_an_element_there(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("job-new")).content.decode()
    described = re.findall(r'aria-describedby="([^"]+)"', page)
    assert described  # the callback URL field's help text
    for ids in described:
        assert all(f'id="{one}"' in page for one in ids.split()), ids


def test_portal_upload_creates_the_job_and_opens_its_page(owner: Persona) -> None:
    response = post_upload(logged_in(owner), b"email\nA@good.com\nb@good.com\na@good.com\n")
    job = Job.objects.get(account=owner.account)
    assert response.status_code == 302 and response["Location"] == reverse("job", args=[job.pk])
    assert (job.total, job.status, job.chunks.count()) == (2, "pending", 1)


def test_portal_upload_keeps_the_callback_url(owner: Persona, receiver: Receiver) -> None:
    post_upload(logged_in(owner), b"a@good.com\n", callback_url=receiver.url)
    assert Job.objects.get(account=owner.account).callback_url == receiver.url


@pytest.mark.parametrize(
    ("plan", "credits", "message"),
    [
        ("free", 100, "Bulk verification needs the Starter plan or above."),
        ("starter", 0, "Your credit balance cannot pay for this request."),
    ],
)
def test_upload_refused_for_plan_or_balance_is_a_form_error(
    db: None, media: Path, plan: str, credits: int, message: str
) -> None:
    response = post_upload(logged_in(make_persona(plan_code=plan, credits=credits)), b"a@good.com\n")
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Job.objects.count() == 0 and stored_files(media) == []


@pytest.mark.parametrize(
    ("content", "callback_url", "message"),
    [
        (b"", "", "The file is empty."),
        (b"\x00\x01\x02binary", "", "The file is not a text (CSV) file."),
        (b"a@good.com\n" * 100_001, "", "more than 100,000"),
        (b"a@good.com\n", "ftp://example.com/x", "absolute http or https"),
        (b"a@good.com\n", "http://127.0.0.1/hook", "non-public address"),
    ],
)
def test_upload_refusals_are_the_apis_messages_as_form_errors(
    owner: Persona, media: Path, content: bytes, callback_url: str, message: str
) -> None:
    api_message = upload(owner, content, callback_url=callback_url).json()["error"]["message"]
    response = post_upload(logged_in(owner), content, callback_url=callback_url)
    page = response.content.decode()
    assert response.status_code == 200 and 'class="errorlist' in page
    assert message in api_message and api_message.replace("'", "&#x27;") in page
    assert Job.objects.count() == 0 and stored_files(media) == []


def test_upload_too_large_is_a_form_error(owner: Persona, media: Path) -> None:
    response = post_upload(logged_in(owner), b"a" * (MAX_UPLOAD_BYTES + 1))
    assert "The file is larger than 25 MB." in response.content.decode()
    assert Job.objects.count() == 0


def test_running_job_page_polls_its_progress_quickly_at_first(owner: Persona) -> None:
    job_id = upload(owner, b"a@good.com\nb@good.com\n").json()["id"]
    browser = logged_in(owner)
    page = browser.get(reverse("job", args=[job_id])).content.decode()
    assert f'hx-get="{reverse("job-progress", args=[job_id])}"' in page
    assert 'hx-trigger="every 250ms"' in page  # a list of a few rows is seen done as it is
    assert 'aria-valuenow="0"' in page and "0 of 2 rows processed" in page
    with time_machine.travel(timezone.now() + timedelta(seconds=6)):
        assert 'hx-trigger="every 1s"' in browser.get(reverse("job-progress", args=[job_id])).content.decode()


def test_a_large_jobs_counts_are_written_with_thousands_separators(owner: Persona) -> None:
    job_id = upload(owner, "".join(f"user{n}@good.com\n" for n in range(1234)).encode()).json()["id"]
    Job.objects.filter(pk=job_id).update(processed=1200, valid=1100, invalid=100)
    partial = logged_in(owner).get(reverse("job-progress", args=[job_id])).content.decode()
    assert "1,200 of 1,234 rows processed" in partial
    assert 'data-count="total">1,234<' in partial and 'data-count="valid">1,100<' in partial
    assert "1,200 / 1,234" in logged_in(owner).get(reverse("jobs")).content.decode()


def test_finished_job_progress_stops_polling_and_offers_the_download(owner: Persona, run_tasks: RunTasks) -> None:
    job = finished_job(owner, run_tasks)
    partial = logged_in(owner).get(reverse("job-progress", args=[job.pk])).content.decode()
    assert "hx-trigger" not in partial and "<html" not in partial
    assert 'aria-valuenow="100"' in partial and "2 of 2 rows processed" in partial
    assert 'data-count="valid">1<' in partial and 'data-count="invalid">1<' in partial
    assert reverse("job-download", args=[job.pk]) in partial


def test_download_redirects_to_a_fresh_signed_result_url(owner: Persona, run_tasks: RunTasks) -> None:
    job = finished_job(owner, run_tasks)
    client = logged_in(owner)
    response = client.get(reverse("job-download", args=[job.pk]))
    assert response.status_code == 302 and "/v1/results/" in response["Location"]
    csv = b"".join(client.get(response["Location"]).streaming_content).decode()
    assert csv.splitlines()[1].startswith("a@good.com,valid")


def test_download_of_an_unfinished_job_is_404(owner: Persona) -> None:
    job_id = upload(owner, b"a@good.com\n").json()["id"]
    assert logged_in(owner).get(reverse("job-download", args=[job_id])).status_code == 404


def test_partial_job_says_credits_ran_out(db: None, run_tasks: RunTasks) -> None:
    owner = make_persona(plan_code="starter", credits=1)
    job = finished_job(owner, run_tasks)
    page = logged_in(owner).get(reverse("job", args=[job.pk])).content.decode()
    assert "Credits ran out: 1 of 2 rows processed" in page


def test_failed_job_shows_its_reason(owner: Persona) -> None:
    job_id = upload(owner, b"a@good.com\n").json()["id"]
    Job.objects.filter(pk=job_id).update(
        status=Job.Status.FAILED, failure_reason="The uploaded file could not be read."
    )
    page = logged_in(owner).get(reverse("job", args=[job_id])).content.decode()
    assert "The uploaded file could not be read." in page and "hx-trigger" not in page


def test_job_page_lists_callback_attempts(owner: Persona, run_tasks: RunTasks, receiver: Receiver) -> None:
    receiver.statuses = [500]
    with run_tasks():
        job_id = upload(owner, b"a@good.com\n", callback_url=receiver.url).json()["id"]
    attempt = CallbackAttempt.objects.get(delivery__job_id=job_id)
    page = logged_in(owner).get(reverse("job", args=[job_id])).content.decode()
    assert "HTTP 500" in page and f"{attempt.duration_ms} ms" in page and "bulk.completed" in page
    assert CallbackDelivery.objects.get(job_id=job_id).state == "pending"


def test_job_list_filters_by_status(owner: Persona, outsider: Persona, run_tasks: RunTasks) -> None:
    done = finished_job(owner, run_tasks)
    waiting = upload(owner, b"c@good.com\n").json()["id"]
    theirs = upload(outsider, b"d@good.com\n").json()["id"]
    client = logged_in(owner)
    every = client.get(reverse("jobs")).content.decode()
    assert done.pk in every and waiting in every and theirs not in every
    completed = client.get(reverse("jobs"), {"status": "completed"}).content.decode()
    assert done.pk in completed and waiting not in completed
    assert "No failed jobs." in client.get(reverse("jobs"), {"status": "failed"}).content.decode()


def test_job_list_is_paginated_by_20(owner: Persona) -> None:
    ids = [stored_job(owner) for _ in range(21)]
    client = logged_in(owner)
    first = client.get(reverse("jobs")).content.decode()
    second = client.get(reverse("jobs"), {"page": 2}).content.decode()
    assert sum(job_id in first for job_id in ids) == 20 and "Page 1 of 2" in first
    assert sum(job_id in second for job_id in ids) == 1


def test_job_list_empty_state_links_to_upload(owner: Persona) -> None:
    page = logged_in(owner).get(reverse("jobs")).content.decode()
    assert "No jobs yet." in page and reverse("job-new") in page


def test_dashboard_lists_the_five_newest_jobs(owner: Persona) -> None:
    ids = [stored_job(owner) for _ in range(6)]
    page = logged_in(owner).get(reverse("dashboard")).content.decode()
    assert [job_id in page for job_id in ids] == [False, True, True, True, True, True]
    assert 'href="/jobs"' in page


def test_a_job_mails_its_uploader_when_done_only_if_asked(owner: Persona, run_tasks: RunTasks) -> None:

    client = logged_in(owner)
    for notify in ("on", ""):
        data = {"file": SimpleUploadedFile("list.csv", b"a@good.com\nb@nullmx.com\n", "text/csv"), "notify_me": notify}
        with run_tasks():
            client.post(reverse("job-new"), data)
    [message] = mail.outbox
    assert message.to == [owner.account.owner.email] and message.subject == "Your list list.csv is verified"
    assert "1 valid, 0 risky, 1 invalid, 0 unknown." in message.body and "/jobs/job_" in message.body
