"""The bulk jobs' fixtures (a private media root, synchronous tasks): erasure and objections reach jobs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from tests.conftest import Persona
from tests.jobs.conftest import RunTasks, media, run_tasks

__all__ = ["media", "run_tasks"]


ERASED = "jane@good.com"
CRM = b"Name,Contact\nJane,Jane@Good.com\nJoe,joe@good.com\n"


def traces(persona: Persona, run_tasks: RunTasks, *, crm: bytes = CRM) -> str:
    """The address everywhere an account keeps it: a cached verdict, an idempotent reply, a report, a
    finished job's result files and a filtered download of them. The job's id."""
    assert persona.post_json("/v1/verify", {"email": ERASED}, **{"Idempotency-Key": "one"}).status_code == 200
    assert persona.post_json("/v1/verify/batch", {"emails": [ERASED, "joe@good.com"]}).status_code == 200
    events = [{"email": ERASED, "outcome": "delivered"}]
    assert persona.post_json("/v1/feedback", {"events": events}).status_code == 200
    with run_tasks():
        data = {"file": _upload_file(crm)}
        job_id = str(persona.client.post("/v1/verify/bulk", data=data, headers=persona.auth({})).json()["id"])
    assert persona.get(f"/v1/jobs/{job_id}/results?status=valid&columns=original").status_code == 302
    return job_id


def _upload_file(content: bytes) -> Any:
    return SimpleUploadedFile("crm.csv", content, "text/csv")


def erase(persona: Persona, body: object) -> Any:
    return persona.post_json("/v1/privacy/erasures", body)


def local_files(media: Path) -> list[tuple[str, bytes]]:
    return [(str(path), path.read_bytes()) for path in media.rglob("*") if path.is_file()]
