"""The hourly sweep of what uploads cut off by a crash leave behind (docs/api.md, "What is kept, and for how long")."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
import time_machine
from django.utils import timezone

from bench.procs import ROOT, free_port, wait_for_port
from jobs import files, tasks
from jobs.models import Job
from tests.conftest import Persona
from tests.jobs.conftest import stored_files, upload
from tests.support.waiting import wait_until


def test_sweep_removes_an_orphaned_upload_folder_after_an_hour_and_keeps_real_jobs(owner: Persona, media: Path) -> None:
    job_id = upload(owner, b"a@good.com\n").json()["id"]
    kept = set(stored_files(media))
    files.input_save("job_" + "O" * 24, ["cut@off.com"], ["cut@off.com"], 10)  # stored, but its job row never committed
    assert tasks.sweep_orphan_uploads() == 0  # young: maybe an upload still being stored
    with time_machine.travel(timezone.now() + timedelta(minutes=61)):
        assert tasks.sweep_orphan_uploads() == 2  # the chunk's addresses and their original rows
    assert set(stored_files(media)) == kept
    assert Job.objects.filter(pk=job_id).exists()


def test_sweep_removes_stale_upload_temp_files_only(db: None, settings: Any, tmp_path: Path) -> None:
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    stale, fresh, other = tmp_path / "tmpab12.upload.csv", tmp_path / "tmpcd34.upload.csv", tmp_path / "notes.txt"
    for path in (stale, fresh, other):
        path.write_text("x@y.com\n")
    two_hours_ago = (timezone.now() - timedelta(hours=2)).timestamp()
    os.utime(stale, (two_hours_ago, two_hours_ago))
    os.utime(other, (two_hours_ago, two_hours_ago))
    assert tasks.sweep_orphan_uploads() == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "tmpcd34.upload.csv"]


@pytest.mark.e2e
def test_a_web_process_killed_mid_upload_leaves_nothing_after_the_sweep(
    db: None, settings: Any, tmp_path: Path, dns_server: Any, migrated_sqlite: Path
) -> None:
    media, spool = tmp_path / "media", tmp_path / "spool"
    spool.mkdir()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "REDIS_URL")}
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'web.sqlite3'}",
        MEDIA_ROOT=str(media),
        FILE_UPLOAD_TEMP_DIR=str(spool),
        VERIFIER_DNS_NAMESERVERS=dns_server.address,
        BULK_CHUNK_SIZE="500",  # many input files: a long enough window to be killed in
    )
    manage = [sys.executable, "manage.py"]
    shutil.copyfile(migrated_sqlite, tmp_path / "web.sqlite3")
    opened = subprocess.run(
        [*manage, "create_account", "--email", "w@example.com", "--plan", "pro", "--credits", "1", "--json"],
        cwd=ROOT, env=env, check=True, timeout=60, capture_output=True,
    )  # fmt: skip
    key = json.loads(opened.stdout)["api_key"]
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        wait_for_port(port)
        content = "".join(f"firstname.lastname{i}@company{i % 997}.example\n" for i in range(100_000)).encode()
        thread = threading.Thread(target=_post_quietly, args=(port, key, content), daemon=True)
        thread.start()
        wait_until(lambda: list(media.glob("jobs/*/input/*.csv")), "the upload's stored file", 60, every=0.001)
        os.killpg(web.pid, signal.SIGKILL)  # mid-store: input files written, the job row not committed
        web.wait(timeout=10)
    finally:
        if web.poll() is None:
            os.killpg(web.pid, signal.SIGKILL)
    left = stored_files(media)
    assert left and list(spool.glob("*.upload*")), "the crash should have left files behind"
    with sqlite3.connect(tmp_path / "web.sqlite3") as connection:
        assert connection.execute("SELECT COUNT(*) FROM jobs_job").fetchone()[0] == 0
    settings.MEDIA_ROOT, settings.FILE_UPLOAD_TEMP_DIR = media, str(spool)
    with time_machine.travel(timezone.now() + timedelta(minutes=61)):
        assert tasks.sweep_orphan_uploads() >= len(left)
    assert stored_files(media) == [] and list(spool.iterdir()) == []


def _post_quietly(port: int, key: str, content: bytes) -> None:
    with contextlib.suppress(requests.RequestException):
        requests.post(
            f"http://127.0.0.1:{port}/v1/verify/bulk",
            files={"file": ("big.csv", content, "text/csv")},
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        )
