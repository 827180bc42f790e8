"""The result files on S3 (django-storages), against a real S3-compatible server on loopback.

moto's server (`moto[server]`, a dev requirement) runs as a subprocess on a free 127.0.0.1 port;
the default storage is pointed at it as production's AWS_STORAGE_BUCKET_NAME settings would. The
downloads are S3's own presigned URLs, fetched over HTTP like a customer would.
"""

from __future__ import annotations

import csv
import io
import urllib.request
from datetime import timedelta
from typing import Any

import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from jobs import tasks
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks
from tests.support.bulk_jobs import upload_with_names
from tests.support.deep import CATCH_ALL, hosted_on, tenants
from tests.support.dns_server import DnsServer
from tests.support.mx_farm import MxFarm
from tests.support.s3 import BUCKET, bucket, s3_endpoint

__all__ = ["bucket", "s3_endpoint"]  # the fixtures, by import

CRM = b"Name,Contact\nJane,jane@good.com\nJoe,x@nullmx.com\nJane again,Jane@good.com\n"


def keys(client: Any) -> list[str]:
    return sorted(item["Key"] for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []))


def fetch(url: str) -> list[list[str]]:
    assert url.startswith("http://127.0.0.1:")  # S3's presigned URL, on loopback
    with urllib.request.urlopen(url, timeout=10) as response:
        return list(csv.reader(io.StringIO(response.read().decode())))


def finished(persona: Persona, run_tasks: RunTasks) -> str:
    with run_tasks():
        data = {"file": SimpleUploadedFile("crm.csv", CRM, "text/csv")}
        response = persona.client.post("/v1/verify/bulk", data=data, headers=persona.auth({}))
    return str(response.json()["id"])


def test_on_s3_the_job_keeps_only_its_result_files(owner: Persona, run_tasks: RunTasks, bucket: Any) -> None:
    job_id = finished(owner, run_tasks)
    assert [key.split("/")[-1].split("-")[0] for key in keys(bucket)] == ["original", "result"]
    assert all(key.startswith(f"jobs/{job_id}/") for key in keys(bucket))


def test_on_s3_the_result_download_url_is_a_presigned_url(owner: Persona, run_tasks: RunTasks, bucket: Any) -> None:
    job = owner.get(f"/v1/jobs/{finished(owner, run_tasks)}").json()
    assert "Signature=" in job["result_download_url"]
    assert [row[:2] for row in fetch(job["result_download_url"])[1:]] == [
        ["jane@good.com", "valid"],
        ["x@nullmx.com", "invalid"],
    ]


def test_on_s3_filtered_results_with_original_columns_redirect_to_s3(
    owner: Persona, run_tasks: RunTasks, bucket: Any
) -> None:
    job_id = finished(owner, run_tasks)
    response = owner.client.get(f"/v1/jobs/{job_id}/results?status=valid&columns=original", headers=owner.auth({}))
    assert response.status_code == 302 and "Signature=" in response["Location"]
    rows = fetch(response["Location"])
    assert rows[0][:4] == ["Name", "Contact", "verifier_email", "verifier_status"]
    assert [row[:4] + row[-1:] for row in rows[1:]] == [
        ["Jane", "jane@good.com", "jane@good.com", "valid", ""],
        ["Jane again", "Jane@good.com", "jane@good.com", "valid", "2"],  # every row back, the repeat too
    ]


def test_on_s3_delete_removes_every_file(owner: Persona, run_tasks: RunTasks, bucket: Any) -> None:
    job_id = finished(owner, run_tasks)
    owner.client.get(f"/v1/jobs/{job_id}/results?status=invalid", headers=owner.auth({}))  # a filtered file too
    assert len(keys(bucket)) == 3
    assert owner.client.delete(f"/v1/jobs/{job_id}", headers=owner.auth({})).status_code == 204
    assert keys(bucket) == []


def test_on_s3_retention_removes_the_files(owner: Persona, run_tasks: RunTasks, bucket: Any, settings: Any) -> None:
    finished(owner, run_tasks)
    with time_machine.travel(timezone.now() + timedelta(days=settings.JOB_RETENTION_DAYS, minutes=1)):
        assert tasks.expire_job_files() == 1
    assert keys(bucket) == []


def test_on_s3_the_sweep_removes_an_orphaned_upload_folder_after_an_hour(
    owner: Persona, run_tasks: RunTasks, bucket: Any
) -> None:
    job_id = finished(owner, run_tasks)
    kept = keys(bucket)
    bucket.put_object(Bucket=BUCKET, Key=f"jobs/job_{'O' * 24}/input/0.txt", Body=b"cut@off.com\n")  # no job row
    assert tasks.sweep_orphan_uploads() == 0  # young: maybe an upload still being stored
    with time_machine.travel(timezone.now() + timedelta(minutes=61)):
        assert tasks.sweep_orphan_uploads() == 1
    assert keys(bucket) == kept and all(key.startswith(f"jobs/{job_id}/") for key in kept)


def test_on_s3_a_grouped_deep_job_comes_back_in_input_order_and_keeps_only_its_result_files(
    owner: Persona,
    settings: Any,
    deep_farm: MxFarm,
    _resolver_on_loopback: DnsServer,
    run_tasks: RunTasks,
    bucket: Any,
) -> None:
    """A deep job larger than a batch, ordered by MX address before it runs (jobs/grouping.py): its
    chunks' files and positions on S3 too, and the result files in the upload's order."""
    settings.BULK_DEEP_CHUNK_SIZE, settings.BULK_DEEP_BATCH_ROWS = 4, 12
    mailbox, catch_all = tenants(_resolver_on_loopback, 10), hosted_on(_resolver_on_loopback, CATCH_ALL, 10, "s3c")
    rows = [email for pair in zip(mailbox, catch_all, strict=True) for email in (f"alice@{pair[0]}", f"bob@{pair[1]}")]
    with run_tasks():
        job_id = upload_with_names(owner, rows)
    job = owner.get(f"/v1/jobs/{job_id}").json()
    assert job["status"] == "completed"
    assert [row[0] for row in fetch(job["result_download_url"])[1:]] == rows
    response = owner.client.get(f"/v1/jobs/{job_id}/results?columns=original", headers=owner.auth({}))
    assert [row[:2] for row in fetch(response["Location"])[1:]] == [
        [email, f"Name {n}"] for n, email in enumerate(rows)
    ]
    assert [key.split("/")[-1].split("-")[0] for key in keys(bucket)] == ["original", "result"]
