"""An account export with the files on S3 (django-storages, against the S3-compatible server on
loopback of tests/jobs/test_s3.py): the ZIP is saved to the bucket, downloads through its link, and
the sweep deletes it from the bucket once its 24 hours have passed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import time_machine
from django.utils import timezone

from privacy import tasks
from tests.conftest import Persona
from tests.jobs.conftest import RunTasks
from tests.privacy.conftest import download, exported, json_rows, zip_of
from tests.support.s3 import BUCKET, bucket, s3_endpoint

__all__ = ["bucket", "s3_endpoint"]  # the fixtures, by import


def keys(client: Any) -> list[str]:
    return [item["Key"] for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def test_the_export_is_saved_to_the_bucket_downloads_and_goes_after_24_hours(
    owner: Persona, run_tasks: RunTasks, bucket: Any
) -> None:
    export = exported(owner, run_tasks)
    assert keys(bucket) == [f"exports/{export['id']}.zip"]
    archive = zip_of(download(export["download_url"]))
    assert json_rows(archive, "account")[0]["owner_email"] == owner.account.email
    with time_machine.travel(timezone.now() + timedelta(hours=25)):
        assert tasks.expire_export_files() == 1
    assert keys(bucket) == []


def test_a_zip_a_lost_worker_left_unnamed_goes_from_the_bucket_after_an_hour(
    owner: Persona, run_tasks: RunTasks, bucket: Any
) -> None:
    export = exported(owner, run_tasks)
    bucket.put_object(Bucket=BUCKET, Key="exports/999999.zip", Body=b"PK")  # stored, then its worker killed
    assert tasks.expire_export_files() == 0  # under an hour old: it may be a build about to be done
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        assert tasks.expire_export_files() == 1
    assert keys(bucket) == [f"exports/{export['id']}.zip"]
