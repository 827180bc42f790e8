"""POST /v1/verify/bulk/preview: free, no job, no file, no credit movement (docs/bulk.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from billing.models import LedgerEntry
from jobs.csvfile import MAX_ROWS
from jobs.models import Job
from tests.conftest import Persona, make_persona
from tests.jobs.conftest import stored_files

LIST = "Name,Contact\nJane,jane@good.com\nJoe,JANE@good.com\nBad,not-an-address\nAnn,ann@good.com\n"


def preview(persona: Persona, content: str | bytes, **parts: str) -> Any:
    raw = content.encode() if isinstance(content, str) else content
    data: dict[str, Any] = {"file": SimpleUploadedFile("crm.csv", raw, "text/csv"), **parts}
    return persona.client.post("/v1/verify/bulk/preview", data=data, headers=persona.auth({}))


def test_preview_counts_rows_duplicates_and_invalid_syntax(owner: Persona) -> None:
    body = preview(owner, LIST).json()
    assert {k: body[k] for k in ("rows", "unique", "duplicates", "invalid_syntax", "credits_needed")} == {
        "rows": 4,
        "unique": 3,
        "duplicates": 1,
        "invalid_syntax": 1,
        "credits_needed": 3,
    }


def test_preview_names_the_detected_column_header_and_sample(owner: Persona) -> None:
    body = preview(owner, LIST).json()
    assert (body["email_column"], body["has_header"], body["columns"]) == ("Contact", True, ["Name", "Contact"])
    assert body["sample"] == ["jane@good.com", "not-an-address", "ann@good.com"]
    assert body["credits_available"] == owner.account.credit_balance and body["estimated_seconds"] >= 1


def test_preview_without_header_names_the_column_by_number(owner: Persona) -> None:
    body = preview(owner, "Jane,jane@good.com\n").json()
    assert (body["email_column"], body["has_header"], body["columns"]) == (2, False, ["column_1", "column_2"])


def test_preview_follows_the_email_column_part(owner: Persona) -> None:
    assert preview(owner, "a,b\nx@good.com,y@good.com\n", email_column="1").json()["sample"] == ["x@good.com"]


def test_preview_moves_nothing(owner: Persona, media: Path) -> None:
    ledger = LedgerEntry.objects.count()
    assert preview(owner, LIST).status_code == 200
    assert (Job.objects.count(), LedgerEntry.objects.count(), stored_files(media)) == (0, ledger, [])


def test_preview_with_no_credits_is_still_200(db: None) -> None:
    broke = make_persona(plan_code="starter", credits=0)
    body = preview(broke, LIST).json()
    assert (body["credits_needed"], body["credits_available"]) == (3, 0)


def test_preview_on_the_free_plan_answers_and_says_the_plan_cannot_verify_it(db: None) -> None:
    body = preview(make_persona(plan_code="free", credits=10), LIST).json()
    assert (body["unique"], body["bulk_in_plan"]) == (3, False)


def test_preview_has_the_uploads_limits(owner: Persona) -> None:
    too_many = preview(owner, "".join(f"u{i}@good.com\n" for i in range(MAX_ROWS + 1)))
    assert (too_many.status_code, too_many.json()["error"]["code"]) == (422, "too_many_rows")
    empty = preview(owner, "email\n")
    assert (empty.status_code, empty.json()["error"]["code"]) == (400, "invalid_file")


def test_preview_refuses_an_unknown_email_column(owner: Persona) -> None:
    error = preview(owner, LIST, email_column="Phone").json()["error"]
    assert (error["code"], error["param"]) == ("invalid_request", "email_column")
