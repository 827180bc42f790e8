"""The bulk jobs' fixtures (a private media root, synchronous tasks): erasure and objections reach jobs."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from tests.conftest import Persona
from tests.jobs.conftest import RunTasks, media, run_tasks

__all__ = ["media", "run_tasks"]


ERASED = "jane@good.com"
CRM = b"Name,Contact\nJane,Jane@Good.com\nJoe,joe@good.com\n"


def traces(persona: Persona, run_tasks: RunTasks, *, crm: bytes = CRM) -> str:
    """The address everywhere an account keeps it: a cached verdict, an idempotent reply, a report, a
    finished job's result files and a filtered download of them, and an export built after (its ZIP
    a copy of the report). The job's id."""
    assert persona.post_json("/v1/verify", {"email": ERASED}, **{"Idempotency-Key": "one"}).status_code == 200
    assert persona.post_json("/v1/verify/batch", {"emails": [ERASED, "joe@good.com"]}).status_code == 200
    events = [{"email": ERASED, "outcome": "delivered"}]
    assert persona.post_json("/v1/feedback", {"events": events}).status_code == 200
    with run_tasks():
        data = {"file": _upload_file(crm)}
        job_id = str(persona.client.post("/v1/verify/bulk", data=data, headers=persona.auth({})).json()["id"])
    assert persona.get(f"/v1/jobs/{job_id}/results?status=valid&columns=original").status_code == 302
    archive = zip_of(download(exported(persona, run_tasks)["download_url"]))
    assert ("good.com", "delivered") in [
        (row["domain"], row["outcome"]) for row in json_rows(archive, "feedback_reports")
    ]
    return job_id


def zips(files: list[tuple[str, bytes]]) -> list[str]:
    """The names of the stored files that are ZIPs (accounts' exports)."""
    return [name for name, content in files if content.startswith(b"PK\x03\x04")]


def _upload_file(content: bytes) -> Any:
    return SimpleUploadedFile("crm.csv", content, "text/csv")


def erase(persona: Persona, body: object) -> Any:
    """POST /v1/privacy/erasures; what waits for its commit (deleting exports' ZIPs) runs within `run_tasks`."""
    return persona.post_json("/v1/privacy/erasures", body)


def erased_by_staff(admin_client_: Client, email: str = ERASED, reason: str = "Request 2026-114 by mail") -> Any:
    """A person erasure added in the admin; what waits for its commit runs within `run_tasks`."""
    return admin_client_.post(reverse("admin:privacy_personerasure_add"), {"email": email, "reason": reason})


def local_files(media: Path) -> list[tuple[str, bytes]]:
    return [(str(path), path.read_bytes()) for path in media.rglob("*") if path.is_file()]


def exported(persona: Persona, run_tasks: RunTasks) -> dict[str, Any]:
    """Ask for an export, let the worker build it, and read it back: the export resource."""
    with run_tasks():
        asked = persona.post_json("/v1/account/export", {})
    assert asked.status_code == 202, asked.content
    assert asked["Location"] == f"/v1/account/export/{asked.json()['id']}"
    response = persona.get(asked["Location"])
    assert response.status_code == 200
    return dict(response.json())


def zip_of(response: Any) -> zipfile.ZipFile:
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/zip"
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def download(url: str) -> Any:
    return Client().get(url.removeprefix("http://testserver"))


def json_rows(archive: zipfile.ZipFile, section: str) -> list[dict[str, Any]]:
    return list(json.loads(archive.read(f"{section}.json")))


def csv_rows(archive: zipfile.ZipFile, section: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(archive.read(f"{section}.csv").decode("utf-8"))))
