"""bench/procs.py: the processes a test or benchmark starts stop on SIGINT, however it was started."""

from __future__ import annotations

import subprocess
import sys

from bench.procs import ROOT

# A parent started with SIGINT ignored, as a shell's `cmd &` starts it, that starts a Python child.
PARENT = """
import signal, subprocess, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
if sys.argv[1] == "interruptible":
    from bench.procs import interruptible
    interruptible()
child = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout.strip())
"""


def sigint_handled_in_child(mode: str) -> str:
    done = subprocess.run([sys.executable, "-c", PARENT, mode], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_child_of_a_parent_started_with_sigint_ignored_stops_on_sigint() -> None:
    assert sigint_handled_in_child("as-started") == "False"  # what stop_group's SIGINT met before
    assert sigint_handled_in_child("interruptible") == "True"
