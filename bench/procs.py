"""Starting and stopping the processes a benchmark needs, and reading their peak memory.

Every process is started in a session of its own, so it and its children (gunicorn's
and qcluster's workers) form one process group that is stopped as a whole: SIGINT, as a
terminal's Ctrl-C sends it, then SIGKILL after a grace period. ``Processes`` stops everything it started on exit,
also on an exception or Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, timeout: float = 60.0, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"process {process.args!r} exited with {process.returncode} before listening")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listened on 127.0.0.1:{port} within {timeout:.0f} s")


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == pgid:
                    members.append(int(entry.name))
            except (ProcessLookupError, PermissionError):
                continue
    return sorted(members)


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU the processes have used so far (`/proc/<pid>/stat`); 0 for one gone."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += int(fields[11]) + int(fields[12])  # utime and stime, in clock ticks
    return total / os.sysconf("SC_CLK_TCK")


def command_line(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def peak_rss_mib(pid: int) -> float:
    """VmHWM (the peak resident set) of one process, in MiB; 0 when it is gone."""
    return _status_mib(pid, "VmHWM")


def current_rss_mib(pid: int) -> float:
    return _status_mib(pid, "VmRSS")


def _status_mib(pid: int, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def reset_peak_rss() -> bool:
    """Reset this process's VmHWM to its current RSS (Linux: clear_refs 5). False when not allowed."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


@dataclass(frozen=True)
class GroupMemory:
    """Peak RSS of each member of a process group (MiB)."""

    peaks: tuple[float, ...]

    @property
    def largest(self) -> float:
        return max(self.peaks, default=0.0)

    @property
    def total(self) -> float:
        return sum(self.peaks)


def group_memory(pgid: int, *, exclude_leader: bool = False) -> GroupMemory:
    pids = [pid for pid in group_members(pgid) if not (exclude_leader and pid == pgid)]
    return GroupMemory(tuple(peak_rss_mib(pid) for pid in pids))


@dataclass
class Processes:
    """The processes of one benchmark; ``stop_all`` (or leaving the ``with``) ends every one."""

    env: dict[str, str]
    started: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(
        self, *argv: str, env: dict[str, str] | None = None, stdout: int | None = None
    ) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            list(argv),
            cwd=ROOT,
            env=env or self.env,
            stdin=subprocess.DEVNULL,
            stdout=stdout if stdout is not None else subprocess.DEVNULL,
            stderr=None,  # errors of a service under load are worth seeing
            start_new_session=True,
        )
        self.started.append(process)
        return process

    def manage(self, *argv: str, timeout: float = 300) -> str:
        done = subprocess.run(
            [PY, "manage.py", *argv], cwd=ROOT, env=self.env, capture_output=True, timeout=timeout, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(argv)} failed:\n{done.stderr.decode()[-3000:]}")
        return done.stdout.decode()

    def stop(self, process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
        stop_group(process, grace)

    def stop_all(self) -> None:
        """Every process at once: each is asked to stop before any is waited for."""
        stop_groups(list(reversed(self.started)), grace=10.0)
        self.started.clear()

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_all()


def interruptible() -> None:
    """Let the processes started from here stop on SIGINT, even where this one was started with it ignored.

    A command a non-interactive shell starts in the background (`cmd &`, as a CI runner may) has
    SIGINT ignored, and every process it starts inherits that: `runserver` then sat out
    stop_group's whole grace before SIGKILL (measured: three live-stack test modules 49 s instead
    of 28 s). A handled signal is reset to its default in a child, so handling it here is enough.
    Call it from the main thread, before starting anything: `bench` and the test session do.
    """
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def stop_group(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGINT the process's group, SIGKILL whatever is left after ``grace`` seconds.

    SIGINT, not SIGTERM: django-q2's workers take SIGTERM's default and die at once, and the
    cluster is then left hanging (still there 15 s later, every time we looked); SIGINT, which the
    workers leave to the cluster, stops a qcluster cleanly in under a second. gunicorn, runserver,
    make and the shell of `make run` all stop on SIGINT too.
    """
    stop_groups([process], grace)


def stop_groups(processes: list[subprocess.Popen[bytes]], grace: float = 10.0) -> None:
    """stop_group for several at once: all are sent SIGINT, then waited for within one grace."""

    def running(process: subprocess.Popen[bytes]) -> bool:
        return process.poll() is None or bool(group_members(process.pid))

    asked = [process for process in processes if running(process)]
    for process in asked:
        _signal_group(process.pid, signal.SIGINT)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(running(process) for process in asked):
        time.sleep(0.05)
    for process in asked:
        _signal_group(process.pid, signal.SIGKILL)
    for process in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
