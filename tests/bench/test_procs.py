"""bench/procs.py: the processes a test or benchmark starts stop on SIGINT, however it was started."""

from __future__ import annotations

import subprocess
import sys

from bench.procs import ROOT, command_line, cpu_seconds

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


BUSY = "import sys; sum(range(20_000_000)); print('done', flush=True); sys.stdin.read()"


def test_a_process_cpu_seconds_are_what_it_used_and_nothing_once_it_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", BUSY], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    try:
        assert child.stdout.readline() == "done\n"
        assert cpu_seconds([child.pid]) > 0.1
        assert command_line(child.pid)[1:3] == ["-c", BUSY]
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    assert cpu_seconds([child.pid]) == 0
