"""docs/bulk.md through the API: the email column, the job's new fields, GET /v1/jobs/{id}/results."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs import tasks
from jobs.models import Job
from jobs.result_rows import RESULT_COLUMNS
from tests.conftest import Persona, make_persona
from tests.jobs.conftest import RunTasks, stored_files, upload
from tests.support.dns_server import MX, DnsServer
from verification.engine.providers import PROVIDERS

CRM = (
    "Name,Company,Mail To,Lead Score\n"
    "Jane,Acme,jane@good.com,90\n"
    "=HYPERLINK(1),Bolt,x@nullmx.com,-3\n"
    "Info,Acme,info@good.com,10\n"
    "Jane again,Acme,JANE@good.com,1\n"
    "Bad,Acme,not-an-address,0\n"
    "Free,Home,someone@gmail.com,5\n"
    "Typo,Home,someone@gmsil.com,5\n"
)


def upload_with(persona: Persona, content: str, **parts: str) -> Any:
    data: dict[str, Any] = {"file": SimpleUploadedFile("crm.csv", content.encode(), "text/csv"), **parts}
    return persona.client.post("/v1/verify/bulk", data=data, headers=persona.auth({}))


def finished(persona: Persona, run_tasks: RunTasks, content: str = CRM, **parts: str) -> str:
    with run_tasks():
        response = upload_with(persona, content, **parts)
    assert response.status_code == 202, response.json()
    return str(response.json()["id"])


def results(persona: Persona, job_id: str, **query: str) -> Any:
    return persona.client.get(f"/v1/jobs/{job_id}/results", query, headers=persona.auth({}))


def downloaded(persona: Persona, job_id: str, **query: str) -> list[list[str]]:
    response = results(persona, job_id, **query)
    assert response.status_code == 302, response.content
    body = b"".join(persona.client.get(response["Location"].removeprefix("http://testserver")).streaming_content)
    return list(csv.reader(io.StringIO(body.decode())))


def test_the_job_detects_the_column_holding_addresses_and_skips_the_header(owner: Persona, run_tasks: RunTasks) -> None:
    job_id = finished(owner, run_tasks)
    assert [row[0] for row in downloaded(owner, job_id)[1:3]] == ["jane@good.com", "x@nullmx.com"]


def test_email_column_part_picks_the_column_by_name(owner: Persona, run_tasks: RunTasks) -> None:
    job_id = finished(owner, run_tasks, "Work,Home\na@good.com,b@good.com\n", email_column="home")
    assert [row[0] for row in downloaded(owner, job_id)[1:]] == ["b@good.com"]


def test_unknown_email_column_is_400_on_param_email_column(owner: Persona) -> None:
    response = upload_with(owner, CRM, email_column="Phone")
    assert response.status_code == 400
    assert (response.json()["error"]["code"], response.json()["error"]["param"]) == ("invalid_request", "email_column")
    assert Job.objects.count() == 0


def test_job_object_has_the_file_name_without_its_folder(owner: Persona) -> None:
    data = {"file": SimpleUploadedFile("C:\\Users\\me\\leads 2026.csv", b"a@good.com\n", "text/csv")}
    job_id = owner.client.post("/v1/verify/bulk", data=data, headers=owner.auth({})).json()["id"]
    assert owner.get(f"/v1/jobs/{job_id}").json()["filename"] == "leads 2026.csv"


def test_breakdown_counts_processed_rows_by_sub_status_and_flag(owner: Persona, run_tasks: RunTasks) -> None:
    job_id = finished(owner, run_tasks)
    assert owner.get(f"/v1/jobs/{job_id}").json()["breakdown"] == {
        "invalid_syntax": 1,
        "no_mx_record": 1,
        "disposable": 0,
        "role_based": 1,
        "dns_temporary_failure": 0,
        # Deep mode's sub-statuses (docs/deep.md), zero in a fast job.
        **dict.fromkeys(
            ["catch_all", "mailbox_not_found", "mailbox_disabled", "mailbox_full", "greylisted", "smtp_blocked"], 0
        ),
        "smtp_unreachable": 0,
        "smtp_utf8_unsupported": 0,
        "verification_failed": 0,
        "address_objected": 0,
        "free_provider": 1,
        "did_you_mean": 1,
        "catch_all_likely": 0,
        "catch_all_unlikely": 0,
        "mail_provider": {provider: int(provider == "google") for provider in PROVIDERS},
    }


def test_a_likely_typo_on_a_throwaway_list_is_counted_once_under_typos_and_named_a_typo(
    owner: Persona, run_tasks: RunTasks, dns_server: DnsServer
) -> None:
    dns_server.set("gmial.com", MX("mx.gmial.com"))  # listed as throwaway, and takes mail
    content = "email\njane@gmial.com\nsomeone@mailinator.com\ninfo@good.com\njoe@good.com\n"
    job_id = finished(owner, run_tasks, content)
    breakdown = owner.get(f"/v1/jobs/{job_id}").json()["breakdown"]
    assert (breakdown["disposable"], breakdown["did_you_mean"], breakdown["role_based"]) == (1, 1, 1)
    rows = downloaded(owner, job_id)
    reason, sub_status = rows[0].index("reason"), rows[0].index("sub_status")
    assert [(row[0], row[sub_status], row[reason]) for row in rows[1:]] == [
        ("jane@gmial.com", "disposable", "Likely typo of jane@gmail.com"),  # the API's sub_status stays
        ("someone@mailinator.com", "disposable", "Throwaway address"),
        ("info@good.com", "role_based", "Shared inbox (info@, sales@ …)"),
        ("joe@good.com", "", ""),
    ]
    original = downloaded(owner, job_id, columns="original")
    assert original[1][original[0].index("verifier_reason")] == "Likely typo of jane@gmail.com"


def test_breakdown_counts_rows_by_mail_provider(owner: Persona, run_tasks: RunTasks, dns_server: DnsServer) -> None:
    dns_server.set("contoso.com", MX("contoso-com.mail.protection.outlook.com"))
    dns_server.set("fabrikam.com", MX("fabrikam-com.mail.protection.outlook.com"))
    rows = ["a@contoso.com", "b@fabrikam.com", "c@gmail.com", "d@yahoo.com", "e@good.com", "not-an-address"]
    counts = owner.get(f"/v1/jobs/{finished(owner, run_tasks, chr(10).join(rows))}").json()["breakdown"][
        "mail_provider"
    ]
    assert {name: n for name, n in counts.items() if n} == {"microsoft": 2, "google": 1, "yahoo": 1}
    assert set(counts) == set(PROVIDERS)


def test_original_columns_come_first_then_the_verifier_columns(owner: Persona, run_tasks: RunTasks) -> None:
    rows = downloaded(owner, finished(owner, run_tasks), columns="original")
    verifier = [f"verifier_{column}" for column in RESULT_COLUMNS]
    assert rows[0] == ["Name", "Company", "Mail To", "Lead Score", *verifier, "duplicate_of_row"]
    assert rows[1][:7] == ["Jane", "Acme", "jane@good.com", "90", "jane@good.com", "valid", ""]


def test_every_row_comes_back_in_upload_order_a_repeated_address_naming_its_first_row(
    owner: Persona, run_tasks: RunTasks
) -> None:
    rows = downloaded(owner, finished(owner, run_tasks), columns="original")
    assert [(row[0], row[-1]) for row in rows[1:]] == [
        ("Jane", ""),
        ("'=HYPERLINK(1)", ""),
        ("Info", ""),
        ("Jane again", "2"),  # the header is row 1: Jane's first row is row 2
        ("Bad", ""),
        ("Free", ""),
        ("Typo", ""),
    ]
    jane, again = rows[1], rows[4]
    assert again[4:-1] == jane[4:-1]  # the same verdict, from verifier_email on
    assert downloaded(owner, Job.objects.get().pk)[1:] == [row[4:-1] for row in rows[1:] if not row[-1]]


def test_a_repeated_address_is_charged_once(owner: Persona, run_tasks: RunTasks) -> None:
    before = owner.account.credit_balance
    content = "email\na@good.com\nA@good.com\nb@good.com\na@good.com \n"
    job = Job.objects.get(pk=finished(owner, run_tasks, content))
    owner.account.refresh_from_db()
    assert (job.total, before - owner.account.credit_balance) == (2, 2)


def test_repeated_rows_follow_their_address_and_name_its_first_row_even_past_blank_rows(
    owner: Persona, run_tasks: RunTasks, settings: Any
) -> None:
    settings.BULK_CHUNK_SIZE = 2  # the repeats fall in other chunks than their first rows
    content = "email,n\na@good.com,1\n\nb@good.com,2\nnot an address,3\nc@good.com,4\na@good.com,5\n"
    content += "x,6\nnot an address,7\nd@good.com,8\nb@good.com,9\nB@good.com,10\n"
    rows = downloaded(owner, finished(owner, run_tasks, content), columns="original")
    status = rows[0].index("verifier_status")
    assert [(row[1], row[status], row[-1]) for row in rows[1:]] == [
        ("1", "valid", ""),
        ("2", "valid", ""),
        ("3", "invalid", ""),
        ("4", "valid", ""),
        ("5", "valid", "2"),
        ("6", "invalid", ""),
        ("7", "invalid", "5"),  # the blank line is row 3, as a spreadsheet numbers it
        ("8", "valid", ""),
        ("9", "valid", "4"),
        ("10", "valid", "4"),
    ]
    assert rows[7][status + 1] == "invalid_syntax"


def test_formula_neutralising_applies_to_the_customers_cells_too(owner: Persona, run_tasks: RunTasks) -> None:
    rows = downloaded(owner, finished(owner, run_tasks), columns="original")
    assert rows[2][:4] == ["'=HYPERLINK(1)", "Bolt", "x@nullmx.com", "'-3"]


def test_a_file_without_header_gets_numbered_columns(owner: Persona, run_tasks: RunTasks) -> None:
    rows = downloaded(owner, finished(owner, run_tasks, "Jane,jane@good.com\n"), columns="original")
    assert rows[0][:3] == ["column_1", "column_2", "verifier_email"]
    assert rows[1][:2] == ["Jane", "jane@good.com"]


def test_status_filter_keeps_only_those_statuses_in_upload_order(owner: Persona, run_tasks: RunTasks) -> None:
    job_id = finished(owner, run_tasks)
    safe = downloaded(owner, job_id, status="valid", columns="original")
    assert [row[2] for row in safe[1:]] == ["jane@good.com", "JANE@good.com", "someone@gmail.com", "someone@gmsil.com"]
    both = downloaded(owner, job_id, status="risky,valid")
    assert {row[1] for row in both[1:]} == {"valid", "risky"} and both[0] == list(RESULT_COLUMNS)


@pytest.mark.parametrize(
    ("query", "param"), [({"status": "good"}, "status"), ({"status": ""}, "status"), ({"columns": "all"}, "columns")]
)
def test_bad_results_parameters_are_400(owner: Persona, run_tasks: RunTasks, query: dict[str, str], param: str) -> None:
    response = results(owner, finished(owner, run_tasks), **query)
    assert response.status_code == 400
    assert (response.json()["error"]["code"], response.json()["error"]["param"]) == ("invalid_request", param)


def test_results_of_an_unfinished_job_are_409_job_not_finished(owner: Persona) -> None:
    job_id = upload(owner, b"a@good.com\n").json()["id"]
    response = results(owner, job_id)
    assert (response.status_code, response.json()["error"]["code"]) == (409, "job_not_finished")


def test_results_of_a_failed_job_are_404(owner: Persona, media: Path) -> None:
    job_id = upload(owner, b"a@good.com\n").json()["id"]
    for path in stored_files(media):
        path.unlink()  # its file gone: the job fails
    tasks.run_chunk(Job.objects.get(pk=job_id).chunks.get().pk)
    assert Job.objects.get(pk=job_id).status == "failed"
    assert results(owner, job_id).status_code == 404


def test_input_and_parts_are_deleted_once_the_results_exist(owner: Persona, run_tasks: RunTasks, media: Path) -> None:
    job_id = finished(owner, run_tasks)
    names = sorted(path.relative_to(media / "jobs" / job_id).as_posix() for path in stored_files(media))
    assert [name.split("-")[0] for name in names] == ["original", "result"]


def test_a_partial_job_keeps_original_rows_aligned(db: None, settings: Any, run_tasks: RunTasks) -> None:
    settings.BULK_CHUNK_SIZE = 2
    poor = make_persona(plan_code="starter", credits=3)
    content = "Name,Email\n" + "".join(f"N{i},user{i}@good.com\n" for i in range(7)) + "Again,user4@good.com\n"
    content += "Again,user1@good.com\n"
    rows = downloaded(poor, finished(poor, run_tasks, content), columns="original")
    expected = [(f"N{i}", f"user{i}@good.com", "") for i in range(3)] + [("Again", "user1@good.com", "3")]
    assert [(row[0], row[1], row[-1]) for row in rows[1:]] == expected  # unprocessed addresses' rows left out


def test_the_first_original_columns_download_builds_the_file_if_the_task_has_not(owner: Persona, media: Path) -> None:
    job_id = upload_with(owner, CRM).json()["id"]
    for chunk in Job.objects.get(pk=job_id).chunks.all():
        tasks.run_chunk(chunk.pk)  # completed; its assemble task never ran (no commit in this test)
    assert Job.objects.get(pk=job_id).original_name == ""
    rows = downloaded(owner, job_id, columns="original")
    assert rows[1][:4] == ["Jane", "Acme", "jane@good.com", "90"]
    names = sorted(path.name.split("-")[0] for path in stored_files(media))
    assert names == ["original", "result"]  # input and parts gone once both result files exist


def test_a_line_break_inside_a_quoted_cell_survives_into_the_original_columns(
    owner: Persona, run_tasks: RunTasks, media: Path
) -> None:
    content = 'email,note\njane@good.com,"line one\nline two"\nbob@good.com,"carriage\r\nreturn"\n'
    job_id = finished(owner, run_tasks, content)
    rows = downloaded(owner, job_id, columns="original")
    assert [row[:2] for row in rows[1:]] == [
        ["jane@good.com", "line one\nline two"],
        ["bob@good.com", "carriage\r\nreturn"],
    ]
    names = sorted(path.name.split("-")[0] for path in stored_files(media))
    assert names == ["original", "result"]  # the input files are gone once both result files exist
