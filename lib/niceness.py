"""CPU priority of this process (Unix niceness), and of its session where Linux groups by session."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

AUTOGROUP = Path("/proc/self/autogroup")


def lower_priority(niceness: int, *, session_leader_marker: bytes = b"qcluster") -> None:
    """Run at `niceness` or nicer from now on; never raises a priority (0 leaves it as it is).

    Bulk workers call it so the interactive requests on the same cores go first. With Linux's
    autogroup scheduling (on by default on most distributions) the kernel first shares the CPU
    between sessions, whatever the nice values of their processes: a qcluster started in a
    session of its own (`setsid`, a container, the benchmark) would still take as much CPU as
    the web. So when this process's session is led by the worker command itself, the session's
    niceness is lowered too. A session shared with anything else (a shell, `make run`'s web
    server) is left alone: there the process niceness already does the job. Under systemd's CPU
    controller neither applies; give the worker unit a lower `CPUWeight=` (docs/bulk.md).
    """
    if niceness <= 0:
        return
    if os.getpriority(os.PRIO_PROCESS, 0) < niceness:
        os.setpriority(os.PRIO_PROCESS, 0, niceness)
    if _session_led_by(session_leader_marker):
        _lower_autogroup(niceness)


def autogroup_niceness() -> int | None:
    """This session's autogroup niceness, or None where the kernel has no autogroups."""
    try:
        return int(AUTOGROUP.read_text().split()[-1])  # "/autogroup-85 nice 0"
    except (OSError, ValueError, IndexError):
        return None


def _session_led_by(marker: bytes) -> bool:
    try:
        leader = Path(f"/proc/{os.getsid(0)}/cmdline").read_bytes()
    except OSError:
        return False
    return marker in leader.split(b"\0")


def _lower_autogroup(niceness: int) -> None:
    current = autogroup_niceness()
    if current is None or current >= niceness:
        return
    # EAGAIN: the kernel rate-limits it (a sibling worker has just done it); EPERM: not ours to change.
    with contextlib.suppress(OSError):
        AUTOGROUP.write_text(str(niceness))
