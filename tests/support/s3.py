"""A real S3-compatible server on loopback (moto's, a subprocess on a free port), and a bucket on it that
the default storage points at, as production's AWS_STORAGE_BUCKET_NAME settings would."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from bench.procs import free_port, wait_for_port

BUCKET = "verifier-test"
CREDENTIALS = {"access_key": "testing", "secret_key": "testing", "region_name": "us-east-1"}


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process=server)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def bucket(s3_endpoint: str, settings: Any) -> Any:
    client = boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=BUCKET)
    options = {"bucket_name": BUCKET, "endpoint_url": s3_endpoint, "querystring_auth": True, **CREDENTIALS}
    options |= {"default_acl": None, "querystring_expire": 3600, "file_overwrite": True}
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options},
    }
    yield client
    for item in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        client.delete_object(Bucket=BUCKET, Key=item["Key"])
    client.delete_bucket(Bucket=BUCKET)
