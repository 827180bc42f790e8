"""lib/priority.py on this kernel: the process and, where the worker leads its session, the session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REPORT = (
    "import os; from lib.priority import lower_priority, autogroup_niceness; "
    "lower_priority(7); print(os.getpriority(os.PRIO_PROCESS, 0), autogroup_niceness())"
)


def _in_own_session(*argv: str) -> tuple[int, int | None]:
    out = subprocess.run(
        [sys.executable, "-c", REPORT, *argv], cwd=ROOT, capture_output=True, text=True, check=True,
        start_new_session=True,
    ).stdout.split()  # fmt: skip
    return int(out[0]), None if out[1] == "None" else int(out[1])


@pytest.fixture
def autogroups() -> None:
    if not Path("/proc/self/autogroup").exists():
        pytest.skip("this kernel has no autogroup scheduling (CONFIG_SCHED_AUTOGROUP)")


def test_a_worker_leading_its_session_lowers_the_session_too(autogroups: None) -> None:
    assert _in_own_session("qcluster") == (7, 7)


def test_a_session_led_by_anything_else_keeps_its_niceness(autogroups: None) -> None:
    assert _in_own_session("runserver") == (7, 0)


def test_zero_changes_nothing() -> None:
    code = "import os; from lib.priority import lower_priority as lower; lower(0); print(os.getpriority(0, 0))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"
