"""lib/niceness.py on this kernel: the process and, where the worker leads its session, the session.

Each child starts at this process's niceness (the suite may itself run under `nice`): what the
tests expect is relative to it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPORT = (
    "import os; from lib.niceness import lower_priority, autogroup_niceness; "
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


def inherited() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


def test_a_worker_leading_its_session_lowers_the_session_too(autogroups: None) -> None:
    assert _in_own_session("qcluster") == (max(7, inherited()), 7)


def test_a_session_led_by_anything_else_keeps_its_niceness(autogroups: None) -> None:
    assert _in_own_session("runserver") == (max(7, inherited()), 0)


def test_zero_changes_nothing() -> None:
    code = "import os; from lib.niceness import lower_priority as lower; lower(0); print(os.getpriority(0, 0))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(inherited())


def test_a_priority_already_lower_is_never_raised() -> None:
    code = "import os; from lib.niceness import lower_priority as lower; lower(7); print(os.getpriority(0, 0))"
    argv = ["nice", "-n", "12", sys.executable, "-c", code]
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(min(19, inherited() + 12))
