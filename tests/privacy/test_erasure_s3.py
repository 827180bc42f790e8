"""Erasure for a customer with the job files on S3 (django-storages, against the S3-compatible
server on loopback of tests/support/s3.py): no object in the bucket holds the address after, and the
account's export built before is deleted from it."""

from __future__ import annotations

from typing import Any

from tests.conftest import Persona
from tests.jobs.conftest import RunTasks
from tests.privacy.conftest import ERASED, erase, traces, zips
from tests.support.s3 import BUCKET, bucket, s3_endpoint
from tests.support.stored import cells_holding, files_holding

__all__ = ["bucket", "s3_endpoint"]  # the fixtures, by import


def objects(client: Any) -> list[tuple[str, bytes]]:
    listed = client.list_objects_v2(Bucket=BUCKET).get("Contents", [])
    return [(item["Key"], client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()) for item in listed]


def test_an_erasure_leaves_no_object_in_the_bucket_holding_the_address(
    owner: Persona, run_tasks: RunTasks, bucket: Any
) -> None:
    traces(owner, run_tasks)
    assert files_holding([ERASED], objects(bucket))  # the result, original and filtered download files
    assert len(zips(objects(bucket))) == 1  # and the export built after
    with run_tasks():  # committed
        erased = erase(owner, {"emails": [ERASED]}).json()["erased"]
    assert (erased["job_result_rows"], erased["export_files"]) == (1, 1)
    assert files_holding([ERASED], objects(bucket)) == [] and zips(objects(bucket)) == []
    assert cells_holding([ERASED]) == []
