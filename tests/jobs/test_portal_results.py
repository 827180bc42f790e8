"""The portal's side of docs/bulk.md: preview card, job page (title, partial, chart, downloads, delete), list."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from jobs.models import Job
from jobs.splitting import chunk_size_for
from tests.conftest import Persona, make_persona
from tests.jobs.conftest import Receiver, RunTasks, stored_files, upload
from tests.support.dns_server import MX, DnsServer
from tests.support.portal import logged_in

CRM = b"Name,Company,Contact\nJane,Acme,jane@good.com\nJoe,Bolt,x@nullmx.com\nJoe,Bolt,X@nullmx.com\n"


def post(persona: Persona, name: str, content: bytes = CRM, **fields: str) -> Any:
    data = {"file": SimpleUploadedFile("crm.csv", content, "text/csv"), "callback_url": "", **fields}
    return logged_in(persona).post(reverse(name), data)


def finished(persona: Persona, run_tasks: RunTasks, content: bytes = CRM, **fields: str) -> Job:
    with run_tasks():
        post(persona, "job-new", content, **fields)
    return Job.objects.get(account=persona.account)


def test_preview_card_shows_the_rows_with_the_email_column_highlighted(owner: Persona) -> None:
    page = post(owner, "job-preview").content.decode()
    assert '<th scope="col" class="email-column" data-email-column>Contact</th>' in page
    assert '<td class="email-column">jane@good.com</td>' in page
    assert '<option value="3" selected>Contact</option>' in page
    assert 'data-preview-count="duplicates">1<' in page and "Verify 2 addresses" in page


def test_preview_says_a_repeated_address_is_charged_once_and_every_row_comes_back(owner: Persona) -> None:
    page = post(owner, "job-preview").content.decode()
    said = re.search(r"data-preview-duplicates>([^<]+)<", page)
    assert said and said[1].split()[:4] == ["1", "row", "repeats", "an"]
    assert "charged once" in said[1] and "gives every row back" in said[1]
    unique = b"Name,Contact\nJane,jane@good.com\n"
    assert "data-preview-duplicates" not in post(owner, "job-preview", unique).content.decode()


def test_preview_card_follows_the_chosen_column(owner: Persona) -> None:
    page = post(owner, "job-preview", email_column="1").content.decode()
    assert '<option value="1" selected>Name</option>' in page and 'data-preview-count="invalid_syntax">2<' in page


MOSTLY_NAMES = b"Name,Contact\nJane,jane@good.com\nJoe,joe@good.com\nAnn,nobody\n"


def test_preview_warns_when_most_of_the_chosen_column_is_not_addresses(owner: Persona) -> None:
    page = post(owner, "job-preview", MOSTLY_NAMES + b"Bo,n/a\nCy,none\n", email_column="2").content.decode()
    assert "Most of the column “Contact” is not email addresses:</strong> 3 of 5 values." in page
    assert 'name="confirm_no_addresses"' not in page
    assert "data-preview-mostly-not-addresses" not in post(owner, "job-preview", MOSTLY_NAMES).content.decode()


def test_preview_asks_for_confirmation_when_the_column_holds_no_address(owner: Persona) -> None:
    page = post(owner, "job-preview", email_column="1").content.decode()
    assert "The column “Name” holds no email address." in page
    assert '<input type="checkbox" name="confirm_no_addresses" value="on" required>' in page


def test_a_column_of_no_addresses_is_not_run_without_confirmation(owner: Persona, media: Path) -> None:
    refused = post(owner, "job-new", email_column="1")
    assert refused.status_code == 200 and "The chosen column holds no email address" in refused.content.decode()
    assert not Job.objects.exists() and stored_files(media) == []
    assert post(owner, "job-new", email_column="1", confirm_no_addresses="on").status_code == 302
    assert Job.objects.get().total == 2


def test_preview_card_on_the_free_plan_shows_the_list_and_where_to_upgrade(db: None) -> None:
    page = post(make_persona(plan_code="free", credits=5), "job-preview").content.decode()
    assert 'data-preview-count="unique">2<' in page and "Upgrade to clean this list" in page
    assert reverse("billing") in page and "data-start" not in page


def test_preview_warns_when_the_balance_will_not_cover_the_list(db: None) -> None:
    page = post(make_persona(plan_code="starter", credits=1), "job-preview").content.decode()
    assert "Your balance will not cover this list." in page and 'name="confirm_partial"' in page
    assert "leaving 1 address unverified" in page and reverse("billing") in page


def test_a_list_bigger_than_the_balance_needs_explicit_confirmation(db: None, media: Path) -> None:
    poor = make_persona(plan_code="starter", credits=1)
    refused = post(poor, "job-new")
    assert refused.status_code == 200 and "Confirm that only part of the list" in refused.content.decode()
    assert Job.objects.count() == 0 and stored_files(media) == []
    assert post(poor, "job-new", confirm_partial="on").status_code == 302


def test_portal_upload_uses_the_chosen_column(owner: Persona, run_tasks: RunTasks) -> None:
    job = finished(owner, run_tasks, b"a@good.com,b@good.com\n", email_column="2")
    assert (job.total, job.filename) == (1, "crm.csv")


def test_job_page_has_the_file_name_as_title_the_chart_and_the_downloads(owner: Persona, run_tasks: RunTasks) -> None:
    job = finished(owner, run_tasks)
    page = logged_in(owner).get(reverse("job", args=[job.pk])).content.decode()
    assert '<h1 class="job-title">crm.csv</h1>' in page
    assert 'data-breakdown="valid"><td>' in page and "50.0%" in page and 'data-breakdown="no_mx_record"' in page
    download = reverse("job-download", args=[job.pk])
    assert f"{download}?status=valid&amp;columns=original" in page and f"{download}?status=invalid" in page
    said = re.search(r"data-downloads-explained>([^<]+)<", page)
    assert said and "every row of it" in said[1] and "duplicate_of_row" in said[1] and "charged once" in said[1]


def test_job_page_counts_rows_by_mail_provider_most_first(
    owner: Persona, run_tasks: RunTasks, dns_server: DnsServer
) -> None:
    dns_server.set("contoso.com", MX("contoso-com.mail.protection.outlook.com"))
    job = finished(owner, run_tasks, b"a@contoso.com\nb@contoso.com\nc@gmail.com\nd@good.com\n")
    page = logged_in(owner).get(reverse("job", args=[job.pk])).content.decode()
    rows = re.findall(r'data-mail-provider="(\w+)"><td>([^<]+)</td><td class="num">(\d+)</td>', page)
    assert rows == [
        ("microsoft", "Microsoft (365, Outlook.com)", "2"),
        ("google", "Google (Gmail, Workspace)", "1"),
        ("other", "Other or none", "1"),
    ]


def test_portal_download_filters_and_keeps_original_columns(owner: Persona, run_tasks: RunTasks) -> None:
    client, job = logged_in(owner), finished(owner, run_tasks)
    link = client.get(reverse("job-download", args=[job.pk]), {"status": "valid", "columns": "original"})["Location"]
    rows = b"".join(client.get(link).streaming_content).decode().splitlines()
    assert rows[0].startswith("Name,Company,Contact,verifier_email,verifier_status") and len(rows) == 2
    assert rows[1].startswith("Jane,Acme,jane@good.com,jane@good.com,valid")
    link = client.get(reverse("job-download", args=[job.pk]), {"status": "invalid", "columns": "original"})["Location"]
    rows = b"".join(client.get(link).streaming_content).decode().splitlines()
    assert [(row.split(",")[2], row.split(",")[-1]) for row in rows[1:]] == [
        ("x@nullmx.com", ""),
        ("X@nullmx.com", "3"),
    ]


def test_partial_job_shows_partial_not_completed(db: None, run_tasks: RunTasks) -> None:
    poor = make_persona(plan_code="starter", credits=1)
    job = finished(poor, run_tasks, confirm_partial="on")
    client = logged_in(poor)
    page = client.get(reverse("job", args=[job.pk])).content.decode()
    assert 'badge-partial" data-job-status>Partial<' in page and "1 row left unverified" in page
    listing = client.get(reverse("jobs")).content.decode()
    assert ">Partial<" in listing and "crm.csv" in listing and "mini-breakdown" in listing
    assert ">Partial<" in client.get(reverse("dashboard")).content.decode()


def test_delete_button_deletes_the_job(owner: Persona, run_tasks: RunTasks, media: Path) -> None:
    job = finished(owner, run_tasks)
    client = logged_in(owner)
    assert "data-confirm-delete" in client.get(reverse("job", args=[job.pk])).content.decode()
    response = client.post(reverse("job-delete", args=[job.pk]))
    assert response["Location"] == reverse("jobs") and not Job.objects.exists() and stored_files(media) == []


def test_a_finished_jobs_page_says_when_it_started_and_finished_and_how_long_it_took(
    owner: Persona, run_tasks: RunTasks
) -> None:
    job = finished(owner, run_tasks)
    Job.objects.filter(pk=job.pk).update(
        started_at=datetime(2026, 11, 24, 9, 0, 0, tzinfo=UTC), completed_at=datetime(2026, 11, 24, 9, 2, 5, tzinfo=UTC)
    )
    page = logged_in(owner).get(reverse("job", args=[job.pk])).content.decode()
    assert "Started <time" in page and ">24 Nov 2026, 09:00:00</time> · finished <time" in page
    assert ">24 Nov 2026, 09:02:05</time> · took <span data-took>2 min 5 s</span>" in page


def test_a_job_done_within_a_second_took_under_a_second_not_0_s(owner: Persona, run_tasks: RunTasks) -> None:
    job = finished(owner, run_tasks)
    started = datetime(2026, 11, 24, 9, 0, 0, tzinfo=UTC)
    Job.objects.filter(pk=job.pk).update(started_at=started, completed_at=started + timedelta(milliseconds=400))
    page = logged_in(owner).get(reverse("job", args=[job.pk])).content.decode()
    assert "took <span data-took>under a second</span>" in page


def test_no_download_button_offers_rows_the_job_does_not_have(owner: Persona, run_tasks: RunTasks) -> None:
    job = finished(owner, run_tasks, b"email\nx@nullmx.com\ny@nowhere-at-all.com\n")  # nothing valid or risky
    page = logged_in(owner).get(reverse("job", args=[job.pk])).content.decode()
    labels = re.findall(r'<span class="download-label">([^<]+)</span>', page)
    assert labels == ["All", "Invalid only"]


def test_a_deleted_jobs_link_says_it_was_deleted_and_when(owner: Persona, run_tasks: RunTasks) -> None:
    job = finished(owner, run_tasks)
    client = logged_in(owner)
    with time_machine.travel(datetime(2026, 11, 24, 17, 45, tzinfo=UTC), tick=False):
        client.post(reverse("job-delete", args=[job.pk]))
    for url in (reverse("job", args=[job.pk]), reverse("job-download", args=[job.pk])):
        response = client.get(url)
        page = response.content.decode()
        assert response.status_code == 404
        assert "This job was deleted" in page and f'crm.csv (<span class="mono">{job.pk}</span>)' in page
        assert "deleted on <time" in page and ">24 Nov 2026, 17:45</time>" in page


def test_an_outsider_learns_nothing_of_a_deleted_job(owner: Persona, outsider: Persona, run_tasks: RunTasks) -> None:
    job = finished(owner, run_tasks)
    logged_in(owner).post(reverse("job-delete", args=[job.pk]))
    response = logged_in(outsider).get(reverse("job", args=[job.pk]))
    assert response.status_code == 404
    assert "No such job" in response.content.decode() and "crm.csv" not in response.content.decode()


def test_callback_attempts_are_part_of_the_polled_progress(
    owner: Persona, run_tasks: RunTasks, receiver: Receiver
) -> None:
    receiver.statuses = [500]
    job = finished(owner, run_tasks, callback_url=receiver.url)
    fragment = logged_in(owner).get(reverse("job-progress", args=[job.pk])).content.decode()
    assert "HTTP 500" in fragment and 'hx-trigger="every 5s"' in fragment  # a retry is still to come


def test_a_small_list_runs_in_several_chunks_so_progress_moves(settings: Any) -> None:
    settings.BULK_CHUNK_SIZE = 2000
    assert (chunk_size_for(10), chunk_size_for(600), chunk_size_for(100_000)) == (25, 60, 2000)


def test_an_unknown_column_posted_to_the_upload_is_shown_as_an_error(owner: Persona) -> None:
    page = post(owner, "job-new", email_column="Phone").content.decode()
    assert "the file has no column" in page and not Job.objects.exists()


def test_the_ledger_names_the_file_and_the_job_of_bulk_entries(owner: Persona, run_tasks: RunTasks) -> None:
    with run_tasks():
        job_id = upload(owner, b"a@good.com\nb@good.com\n", name="spring-leads.csv").json()["id"]
    page = logged_in(owner).get(reverse("billing")).content.decode()
    assert f"spring-leads.csv (job {job_id}, part 1)" in page
    assert ":chunk:" not in page


MIXED = b"email\njane@good.com\ninfo@good.com\nx@servfail.com\n"  # valid, risky (role), unknown


def test_risky_only_and_unknown_only_are_download_choices(owner: Persona, run_tasks: RunTasks) -> None:
    job = finished(owner, run_tasks, MIXED)
    page = logged_in(owner).get(reverse("job", args=[job.pk])).content.decode()
    labels = re.findall(r'<span class="download-label">([^<]+)</span>', page)
    assert labels == ["All", "Safe to send", "Valid + risky", "Risky only", "Unknown only"]


def test_every_download_is_named_by_one_pattern(owner: Persona, run_tasks: RunTasks) -> None:
    job = finished(owner, run_tasks, MIXED)
    client = logged_in(owner)

    def name(**query: str) -> str:
        location = client.get(reverse("job-download", args=[job.pk]), query)["Location"]
        return client.get(location)["Content-Disposition"].split('filename="')[1].rstrip('"')

    assert name() == "crm-all-verdicts.csv"
    assert name(columns="original") == "crm-all-with-your-columns.csv"
    assert name(status="unknown") == "crm-unknown-verdicts.csv"
    assert name(status="valid,risky", columns="original") == "crm-valid-risky-with-your-columns.csv"
