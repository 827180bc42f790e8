"""A client generated from /v1/openapi.json (openapi-python-client) gets typed answers, errors included.

The client is generated (once per schema, kept in `var/generated-clients/`) and calls every operation, with success
and with errors, against a live server on loopback. An undocumented status would raise
UnexpectedStatus (the client is made with raise_on_unexpected_status) and an answer off the
schema would fail to parse.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import io
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from django.test import Client as DjangoClient

from jobs import tasks
from jobs.models import Job
from tests.conftest import make_persona
from tests.support.db import committed_db

PACKAGE = "evclient_generated"


# Generated clients kept across runs, one per schema (the generator takes seconds; its output
# depends on the schema and the generator's version alone). `rm -r var/generated-clients` forgets them.
KEPT = Path(__file__).resolve().parents[2] / "var" / "generated-clients"


@pytest.fixture(scope="module")
def api(django_db_blocker: Any) -> Iterator[ModuleType]:
    with django_db_blocker.unblock():
        schema = DjangoClient().get("/v1/openapi.json").content
    generator = importlib.metadata.version("openapi-python-client").encode()
    root = KEPT / hashlib.sha256(generator + b"\0" + schema).hexdigest()[:16]
    if not (root / PACKAGE).is_dir():
        _generate(schema, root)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def _generate(schema: bytes, root: Path) -> None:
    """openapi-python-client over the schema, in a directory beside `root`, then renamed to it
    (atomically: two workers generating at once each rename a complete package)."""
    KEPT.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=KEPT, prefix="partial-"))
    (work / "schema.json").write_bytes(schema)
    bin_dir = str(Path(sys.executable).parent)  # its ruff post-hook runs from the same venv
    subprocess.run(
        [sys.executable, "-m", "openapi_python_client", "generate", "--path", "schema.json", "--meta", "none"]
        + ["--output-path", PACKAGE],
        cwd=work,
        check=True,
        capture_output=True,
        env={**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")},
    )
    try:
        os.rename(work, root)
    except OSError:  # another worker got there first: its copy is the same
        shutil.rmtree(work, ignore_errors=True)


def op(name: str) -> ModuleType:
    groups = {"verify": "verify", "verify_batch": "verify", "verify_bulk": "verify", "verify_bulk_preview": "verify"}
    groups |= {"account_read": "account"}
    groups |= {"job_list": "jobs", "job_read": "jobs", "job_delete": "jobs", "job_results": "jobs"}
    group = groups.get(name, "results")
    return importlib.import_module(f"{PACKAGE}.api.{group}.{name}")


def model(name: str) -> Any:
    return getattr(importlib.import_module(f"{PACKAGE}.models"), name)


def authed(api: ModuleType, live_server: Any, key: str) -> Any:
    return api.AuthenticatedClient(base_url=live_server.url, token=key, raise_on_unexpected_status=True)


def error_code(parsed: Any) -> str:
    assert isinstance(parsed, model("Error")), parsed
    return parsed.error.code


@committed_db
def test_verify_answers_typed_results_and_typed_errors(api: ModuleType, live_server: Any) -> None:
    owner, broke = make_persona(credits=10), make_persona(credits=0)
    client = authed(api, live_server, owner.api_key)
    body = model("VerifyRequestRequest")
    result = op("verify").sync(client=client, body=body(email="jane@good.com"))
    assert isinstance(result, model("VerificationResult")) and result.status.value == "valid"
    deep = body(email="jane@good.com", validation_mode=model("ValidationModeEnum")("deep"))
    assert error_code(op("verify").sync(client=client, body=deep)) == "deep_mode_disabled"
    assert error_code(op("verify").sync(client=authed(api, live_server, broke.api_key), body=body(email="a@b.co")))
    assert error_code(op("verify").sync(client=authed(api, live_server, "ev_live_nope"), body=body(email="a@b.co")))
    op("verify").sync(client=client, body=body(email="jane@good.com"), idempotency_key="k")
    reused = op("verify").sync(client=client, body=body(email="john@good.com"), idempotency_key="k")
    assert error_code(reused) == "idempotency_key_reused"


@committed_db
def test_batch_and_account_answer_typed(api: ModuleType, live_server: Any) -> None:
    owner, broke = make_persona(credits=10), make_persona(credits=1)
    client = authed(api, live_server, owner.api_key)
    body = model("BatchRequestRequest")
    batch = op("verify_batch").sync(client=client, body=body(emails=["jane@good.com", "nope"]), idempotency_key="b")
    assert isinstance(batch, model("BatchResult"))
    assert [(r.email, r.status.value) for r in batch.data] == [("jane@good.com", "valid"), ("nope", "invalid")]
    broke_client = authed(api, live_server, broke.api_key)
    refused = op("verify_batch").sync(client=broke_client, body=body(emails=["a@good.com", "b@good.com"]))
    assert error_code(refused) == "insufficient_credits"
    assert error_code(op("verify_batch").sync(client=client, body=body(emails=[]))) == "invalid_request"
    summary = op("account_read").sync(client=client)
    assert isinstance(summary, model("Account"))
    assert (summary.credits_remaining, summary.usage.today, summary.key.prefix) == (8, 2, owner.api_key[:12])
    assert error_code(op("account_read").sync(client=authed(api, live_server, "ev_live_nope"))) == "invalid_api_key"


@committed_db
def test_bulk_jobs_and_the_result_download_answer_typed(api: ModuleType, live_server: Any) -> None:
    owner, free = make_persona(plan_code="starter", credits=10), make_persona(plan_code="free", credits=10)
    client = authed(api, live_server, owner.api_key)
    file = importlib.import_module(f"{PACKAGE}.types").File
    upload = model("VerifyBulkBody")

    def csv(content: bytes) -> Any:
        return upload(file=file(payload=io.BytesIO(content), file_name="list.csv", mime_type="text/csv"))

    receipt = op("verify_bulk").sync(client=client, body=csv(b"a@good.com\nb@good.com\n"))
    assert isinstance(receipt, model("BulkSubmitResponse")) and receipt.total_emails == 2
    free_client = authed(api, live_server, free.api_key)
    assert error_code(op("verify_bulk").sync(client=free_client, body=csv(b"a@good.com\n"))) == "plan_upgrade_required"
    assert error_code(op("verify_bulk").sync(client=client, body=csv(b"email\n"))) == "invalid_file"

    for chunk in Job.objects.get(pk=receipt.id).chunks.all():
        tasks.run_chunk(chunk.pk)
    job = op("job_read").sync(client=client, job_id=receipt.id)
    assert isinstance(job, model("Job")) and job.status.value == "completed"
    assert error_code(op("job_read").sync(client=client, job_id="job_" + "x" * 24)) == "not_found"
    page = op("job_list").sync(client=client, limit=1)
    assert isinstance(page, model("JobList")) and [j.id for j in page.data] == [receipt.id]
    assert error_code(op("job_list").sync(client=client, limit=0)) == "invalid_request"

    token = job.result_download_url.rsplit("/", 1)[1]
    anonymous = api.Client(base_url=live_server.url, raise_on_unexpected_status=True)
    downloaded = op("result_download").sync_detailed(client=anonymous, token=token)
    assert downloaded.status_code == 200 and downloaded.parsed.startswith("email,status,")
    assert error_code(op("result_download").sync(client=anonymous, token=token + "x")) == "not_found"


@committed_db
def test_preview_results_and_delete_answer_typed(api: ModuleType, live_server: Any) -> None:
    owner = make_persona(plan_code="starter", credits=10)
    client = authed(api, live_server, owner.api_key)
    file = importlib.import_module(f"{PACKAGE}.types").File
    content = b"Name,Mail To\nJane,jane@good.com\nJoe,jane@good.com\n"

    def body(model_name: str, **parts: Any) -> Any:
        return model(model_name)(file=file(payload=io.BytesIO(content), file_name="crm.csv"), **parts)

    preview = op("verify_bulk_preview").sync(client=client, body=body("VerifyBulkPreviewBody"))
    assert isinstance(preview, model("Preview")) and (preview.unique, preview.duplicates) == (1, 1)
    unknown = body("VerifyBulkPreviewBody", email_column="Phone")
    assert error_code(op("verify_bulk_preview").sync(client=client, body=unknown)) == "invalid_request"
    receipt = op("verify_bulk").sync(client=client, body=body("VerifyBulkBody", email_column="2"))
    assert error_code(op("job_results").sync(client=client, job_id=receipt.id)) == "job_not_finished"
    for chunk in Job.objects.get(pk=receipt.id).chunks.all():
        tasks.run_chunk(chunk.pk)
    redirect = op("job_results").sync_detailed(
        client=client, job_id=receipt.id, columns=model("JobResultsColumns")("original")
    )
    assert redirect.status_code == 302 and "/v1/results/" in redirect.headers["Location"]
    assert op("job_delete").sync_detailed(client=client, job_id=receipt.id).status_code == 204
    assert error_code(op("job_delete").sync(client=client, job_id=receipt.id)) == "not_found"
