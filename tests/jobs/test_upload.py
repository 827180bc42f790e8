"""POST /v1/verify/bulk: what is accepted, what is refused, and that a refusal leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Plan
from billing.models import LedgerEntry
from jobs.csvfile import MAX_UPLOAD_BYTES
from jobs.files import input_rows
from jobs.models import Job
from tests.conftest import Persona, make_persona
from tests.jobs.conftest import Receiver, RunTasks, assert_nothing_left, upload


def refused(persona: Persona, media: Path, content: bytes, status: int, code: str, **kwargs: str) -> dict:
    before = LedgerEntry.objects.filter(account=persona.account).count()
    response = upload(persona, content, **kwargs)
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert_nothing_left(persona, media, before)
    return response.json()["error"]


def test_upload_is_accepted_with_unique_count_and_location(owner: Persona) -> None:
    response = upload(owner, b"email\nA@good.com\nb@good.com\na@good.com\n")
    assert response.status_code == 202
    body = response.json()
    assert set(body) == {"id", "status", "total_emails", "estimated_seconds"}
    assert body["id"].startswith("job_") and len(body["id"]) == 28
    assert (body["status"], body["total_emails"]) == ("pending", 2)
    assert body["estimated_seconds"] >= 1
    assert response["Location"] == f"/v1/jobs/{body['id']}"
    assert response["X-Credits-Remaining"] == "998"  # the balance once the 2 unique addresses are charged


def test_accepted_addresses_are_stored_normalised_and_unique(owner: Persona) -> None:
    job_id = upload(owner, b" X@Good.com\ny@good.com\nx@good.com\n").json()["id"]
    job = Job.objects.get(pk=job_id)
    assert input_rows(job.input_name, 0, 10) == ["x@good.com", "y@good.com"]


def test_plan_without_bulk_is_403(db: None, media: Path) -> None:
    free = make_persona(plan_code="free", credits=100)
    refused(free, media, b"a@good.com\n", 403, "plan_upgrade_required")


def test_zero_balance_is_402(db: None, media: Path) -> None:
    broke = make_persona(plan_code="starter", credits=0)
    refused(broke, media, b"a@good.com\n", 402, "insufficient_credits")


def test_missing_file_is_invalid_file(owner: Persona, media: Path) -> None:
    response = owner.client.post("/v1/verify/bulk", data={"callback_url": ""}, headers=owner.auth({}))
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid_file",
        "message": "Send the CSV file as the multipart part 'file'.",
        "param": "file",
    }
    assert Job.objects.count() == 0


@pytest.mark.parametrize(
    "content",
    [b"", b"email\n", b"\n \n,\n", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4],
    ids=["empty", "header-only", "blank-rows", "binary"],
)
def test_unusable_file_is_invalid_file(owner: Persona, media: Path, content: bytes) -> None:
    assert refused(owner, media, content, 400, "invalid_file")["param"] == "file"


def test_json_body_is_415(owner: Persona) -> None:
    response = owner.post_json("/v1/verify/bulk", {"file": "a@good.com"})
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://localhost/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.8/",
        "http://100.64.1.1/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[fd00::1]/",
        "http://[fe80::1]/",
        "http://0.0.0.0/",
        "http://224.0.0.1/",
        "http://192.0.2.1/",
        "http://user:pw@example.com/",
        "ftp://example.com/",
        "not a url",
        "/relative/path",
        "http://[::1",
    ],
)
def test_bad_callback_url_is_refused(owner: Persona, media: Path, url: str) -> None:
    error = refused(owner, media, b"a@good.com\n", 400, "invalid_callback_url", callback_url=url)
    assert error["param"] == "callback_url"


@pytest.mark.parametrize("tail", ["/a b", "/hook\r\nX-Injected: 1", "/\nhook", "/ho\0ok", "/\x7f", "/\thook"])
def test_a_callback_url_that_could_never_be_sent_is_refused(
    owner: Persona, media: Path, receiver: Receiver, tail: str
) -> None:
    error = refused(owner, media, b"a@good.com\n", 400, "invalid_callback_url", callback_url=receiver.url + tail)
    assert error == {
        "code": "invalid_callback_url",
        "message": "The URL contains a space or a control character: percent-encode it.",
        "param": "callback_url",
    }


def test_100000_rows_are_accepted(owner: Persona) -> None:
    content = "".join(f"user{i}@good.com\n" for i in range(100_000)).encode()
    response = upload(owner, content)
    assert response.status_code == 202
    assert response.json()["total_emails"] == 100_000


def test_100001_rows_are_too_many(owner: Persona, media: Path) -> None:
    content = b"email\n" + "".join(f"user{i}@good.com\n" for i in range(100_001)).encode()
    assert refused(owner, media, content, 422, "too_many_rows")["param"] == "file"


def test_rows_are_counted_before_deduplication(owner: Persona, media: Path) -> None:
    refused(owner, media, b"same@good.com\n" * 100_001, 422, "too_many_rows")


def file_of_exactly(size: int) -> bytes:
    """A valid CSV of `size` bytes: a thousand rows with a wide padding column."""
    rows = [f"user{i}@good.com,".encode() for i in range(1000)]
    head = b"email,padding\n"
    padding = size - len(head) - sum(len(r) + 1 for r in rows)
    share, extra = divmod(padding, len(rows))
    body = b"".join(row + b"x" * (share + (i < extra)) + b"\n" for i, row in enumerate(rows))
    content = head + body
    assert len(content) == size
    return content


def test_file_of_exactly_25_mb_is_accepted(owner: Persona) -> None:
    response = upload(owner, file_of_exactly(MAX_UPLOAD_BYTES))
    assert response.status_code == 202
    assert response.json()["total_emails"] == 1000


def test_file_one_byte_over_25_mb_is_413(owner: Persona, media: Path) -> None:
    error = refused(owner, media, file_of_exactly(MAX_UPLOAD_BYTES + 1), 413, "file_too_large")
    assert error["param"] == "file"


def test_obviously_oversized_body_is_refused_from_content_length(owner: Persona, media: Path) -> None:
    response = owner.client.generic(
        "POST",
        "/v1/verify/bulk",
        b"",
        headers=owner.auth({}),
        CONTENT_TYPE="multipart/form-data; boundary=x",  # the client drops content_type with an empty body
        CONTENT_LENGTH=str(MAX_UPLOAD_BYTES * 2),
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "file_too_large"


def test_idempotent_upload_replays_the_first_job(owner: Persona) -> None:
    first = upload(owner, b"a@good.com\n", idempotency_key="k1")
    again = upload(owner, b"a@good.com\n", idempotency_key="k1")
    assert again.status_code == 202
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert again["Location"] == first["Location"]
    assert Job.objects.count() == 1


def test_retry_after_the_credits_ran_out_and_the_plan_changed_still_replays(owner: Persona) -> None:
    from billing.services import credits_spend

    first = upload(owner, b"a@good.com\n", idempotency_key="k1")
    credits_spend(account=owner.account, amount=owner.account.credit_balance)
    owner.account.plan = Plan.objects.get(code="free")
    owner.account.save(update_fields=["plan"])
    again = upload(owner, b"a@good.com\n", idempotency_key="k1")
    assert again.status_code == 202
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"


def test_idempotency_key_with_another_file_is_422(owner: Persona) -> None:
    upload(owner, b"a@good.com\n", idempotency_key="k1")
    response = upload(owner, b"b@good.com\n", idempotency_key="k1")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "idempotency_key_reused"


def test_refused_upload_does_not_burn_the_idempotency_key(owner: Persona) -> None:
    assert upload(owner, b"email\n", idempotency_key="k1").status_code == 400
    assert upload(owner, b"a@good.com\n", idempotency_key="k1").status_code == 202


def test_upload_without_key_is_401(db: None, client: object) -> None:
    response = client.post("/v1/verify/bulk", data={})  # type: ignore[attr-defined]
    assert response.status_code == 401


def test_utf16_semicolon_file_is_read_through_the_api(owner: Persona) -> None:
    content = "Name;E-Mail;email\nZoë;x;Zoë@Good.com\n".encode("utf-16")
    job_id = upload(owner, content).json()["id"]
    assert input_rows(Job.objects.get(pk=job_id).input_name, 0, 5) == ["zoë@good.com"]


def test_windows_1252_tab_file_is_read_through_the_api(owner: Persona) -> None:
    content = "email\tname\nJosé@good.com\tJosé\n".encode("cp1252")
    job_id = upload(owner, content).json()["id"]
    assert input_rows(Job.objects.get(pk=job_id).input_name, 0, 5) == ["josé@good.com"]


def test_a_header_of_1000_columns_is_accepted(owner: Persona) -> None:
    header = ",".join(["email", *(f"c{i}" for i in range(999))])
    response = upload(owner, f"{header}\na@good.com\n".encode())
    assert response.status_code == 202


def test_more_than_1000_columns_is_invalid_file_and_stores_nothing(owner: Persona, media: Path) -> None:
    header = ",".join(["email", *(f"c{i}" for i in range(1000))])
    error = refused(owner, media, f"{header}\na@good.com\n".encode(), 400, "invalid_file")
    assert (error["param"], error["message"]) == ("file", "The file has more than 1,000 columns.")


def test_a_row_wider_than_1000_columns_is_invalid_file(owner: Persona, media: Path) -> None:
    refused(owner, media, b"email\na@good.com" + b",x" * 1000 + b"\n", 400, "invalid_file")


def test_the_job_list_does_not_load_the_stored_header(owner: Persona) -> None:
    header = ",".join(["email", *(f"column number {i}" for i in range(999))])
    upload(owner, f"{header}\na@good.com\n".encode())
    with CaptureQueriesContext(connection) as queries:
        assert owner.get("/v1/jobs").status_code == 200
    job_reads = [q["sql"] for q in queries.captured_queries if 'FROM "jobs_job"' in q["sql"]]
    assert job_reads and not any('"jobs_job"."columns"' in sql for sql in job_reads)


def test_x_credits_remaining_on_a_bulk_submit_is_the_balance_after_the_job(owner: Persona, run_tasks: RunTasks) -> None:
    content = "".join(f"u{i}@good.com\n" for i in range(10)).encode()
    with run_tasks():
        response = upload(owner, content)
    owner.account.refresh_from_db()
    assert int(response["X-Credits-Remaining"]) == 990 == owner.account.credit_balance
