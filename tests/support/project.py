"""The project as a newcomer runs it: a copy of its folder, and a started command's output read up to a line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# What a test copy of the project leaves out (its .venv becomes a link to the running one).
NOT_COPIED = (".venv", ".git", "var", "media", "staticfiles", "test-artifacts", "__pycache__", "db.sqlite3*")


def project_copy(tmp_path: Path) -> Path:
    """The project in a folder of its own (the commands write var/, staticfiles/ and media/ there), its
    .venv the running one, so `.venv/bin/…` runs as written."""
    copy = tmp_path / "project"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(*NOT_COPIED))
    (copy / ".venv").symlink_to(sys.prefix)
    # The running virtualenv is shared, not the copy's own: its install stamps must never look older
    # than the copy's requirements, or a make target would install into it from the copy (the
    # client's editable install then pointing at this temporary folder, gone after the test).
    for requirements in ("requirements.txt", "requirements-dev.txt"):
        os.utime(copy / requirements, (0, 0))
    return copy


def read_until(process: subprocess.Popen[str], marker: str, timeout: float = 120) -> str:
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not any(marker in line for line in lines):
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
    assert any(marker in line for line in lines), "".join(lines)
    return "".join(lines)
