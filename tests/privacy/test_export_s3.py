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
from tests.jobs.test_s3 import BUCKET, bucket, s3_endpoint
from tests.privacy.test_export import download, exported, json_rows, zip_of

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
