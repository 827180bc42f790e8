"""End to end: an account export asked over HTTP is built by a real qcluster (runserver and a qcluster
as `make run` starts them, on the suite's kind of database), polled to `done` and downloaded."""

from __future__ import annotations

import io
import json
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.dns_server import DnsServer
from tests.support.e2e_stack import Stack, live_stack
from tests.support.stack_db import StackDatabases

pytestmark = pytest.mark.e2e


def export_polled(stack: Stack, location: str, timeout: float = 60) -> dict[str, Any]:
    deadline, body = time.monotonic() + timeout, {}
    while time.monotonic() < deadline:
        body = requests.get(stack.base_url + location, headers=stack.auth(), timeout=10).json()
        if body["status"] not in ("queued", "running"):
            return dict(body)
        time.sleep(0.1)
    raise AssertionError(f"the export did not finish in {timeout} s: {body}")


def test_a_qcluster_builds_the_export_and_its_link_downloads_it(
    tmp_path: Path, dns_server: DnsServer, stack_databases: StackDatabases
) -> None:
    with live_stack(tmp_path, dns_server, stack_databases) as stack:
        asked = requests.post(f"{stack.base_url}/v1/account/export", headers=stack.auth(), timeout=10)
        assert asked.status_code == 202 and asked.json()["status"] == "queued"
        export = export_polled(stack, asked.headers["Location"])
        assert (export["status"], export["progress"]) == ("done", 100), export
        zipped = requests.get(export["download_url"], timeout=10)  # no key: the signed link
        assert zipped.status_code == 200 and zipped.headers["Content-Type"] == "application/zip"
        archive = zipfile.ZipFile(io.BytesIO(zipped.content))
        [account] = json.loads(archive.read("account.json"))
        assert account["credit_balance"] == sum(row["amount"] for row in json.loads(archive.read("credit_ledger.json")))
        assert (
            stack.api_key[:12] in archive.read("api_keys.csv").decode() and stack.api_key.encode() not in zipped.content
        )
