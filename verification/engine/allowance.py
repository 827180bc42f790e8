"""How many sessions at once an MX address allows us, and how far apart they must start: learnt from
its rate-limit refusals (docs/deep.md, "Rate limits").

A server that limits connections per client (Postfix's `smtpd_client_connection_rate_limit`,
counted by its anvil per minute: "421 4.7.0 Error: too many connections from ...") has answered:
it is not unreachable, and the recipients it turned away are asked again. What the refusal teaches
is kept per (egress, MX address), the way TCP keeps a congestion window: a refusal halves the
sessions allowed at once (never below one) and spaces the starts of new sessions, FIRST_INTERVAL
at first and twice as long on each further refusal (at most MAX_INTERVAL), so that a try falls
after the server's window rather than inside it; each session the server takes gives back GROWTH
of a session and shrinks the spacing by SHRINK, up to the configured limit (additive increase).
A refusal of a session begun before the last halving is part of the same burst: it pushes the next
start back but halves nothing again.

The rules live here and are pure; the bookkeeping is shared by every process behind an egress, in
Redis (leases.py, on Redis's clock) or, without Redis, in a small file per address beside the
politeness lock files (AllowanceFile, on this machine's clock). An address whose allowance has not
changed for FORGET_SECONDS is back to the default.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

FIRST_INTERVAL = 1.0  # seconds between session starts after a first refusal
MAX_INTERVAL = 120.0  # twice the minute Postfix's anvil counts over by default
SHRINK = 0.75  # the spacing kept after a session the server took
MIN_INTERVAL = 0.05  # shorter than this, the spacing is dropped
GROWTH = 0.25  # of a session at once, given back for each session the server took
FORGET_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class Allowance:
    limit: float  # sessions at once (its whole part, at least one)
    interval: float = 0.0  # seconds at least between two session starts
    next_start: float = 0.0  # no session starts before (the store's clock)
    refused_at: float = 0.0  # when a refusal last halved it

    @property
    def sessions(self) -> int:
        return max(1, int(self.limit))

    def is_default(self, per_host: int) -> bool:
        return self.limit >= per_host and self.interval == 0.0


class Throttled(Exception):
    """The address's spacing would hold a session past its caller's time: its recipients are asked
    again later (a bulk job's greylist retry), never judged."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"the MX address spaces our sessions: next start in {wait:.1f} s")
        self.wait = wait


@dataclass(slots=True)
class Turn:
    """One session's place in its address's allowance: when it started (the store's clock), whether
    the allowance was anything but the default then, and what the session met (set by the caller)."""

    started: float
    paced: bool = False
    rate_limited: bool = False
    completed: bool = False


def after_refusal(allowance: Allowance, *, now: float, started: float) -> Allowance:
    if started < allowance.refused_at:  # begun before the last halving: the same burst
        return replace(allowance, next_start=max(allowance.next_start, now + allowance.interval))
    interval = min(MAX_INTERVAL, max(FIRST_INTERVAL, 2 * allowance.interval))
    return Allowance(max(1.0, allowance.limit / 2), interval, now + interval, now)


def after_success(allowance: Allowance, *, per_host: int) -> Allowance:
    interval = allowance.interval * SHRINK
    return replace(
        allowance,
        limit=min(float(per_host), allowance.limit + GROWTH),
        interval=interval if interval >= MIN_INTERVAL else 0.0,
    )


def learnt(allowance: Allowance, turn: Turn, *, now: float, per_host: int) -> Allowance:
    """The allowance once `turn`'s session is over: unchanged unless the server refused it for our
    rate, or took it while the allowance was held below the default."""
    if turn.rate_limited:
        return after_refusal(allowance, now=now, started=turn.started)
    if turn.completed and not allowance.is_default(per_host):
        return after_success(allowance, per_host=per_host)
    return allowance


class AllowanceFile:
    """One (egress, address)'s allowance on this machine: a few numbers in a file beside its lock
    files, read and rewritten under flock, so every process of the machine sees one allowance. No
    file, an empty one or one unchanged for FORGET_SECONDS: the default."""

    def __init__(self, path: Path, per_host: int, *, of: str = "") -> None:
        self.path = path
        self.per_host = per_host
        self.of = of  # "<egress>|<address>", kept in the file for the staff dashboard (held_below)

    def sessions(self, now: float) -> int:
        """Sessions allowed at once, read without the lock (it is asked at every poll for a slot): a
        read that meets a write half done sees the default for that poll; the spacing, read under
        the lock, still holds every start back."""
        with contextlib.suppress(FileNotFoundError):
            return self._decoded(self.path.read_text(), now).sessions
        return self.per_host

    def start(self, now: float) -> Turn | float:
        """A session may start now (its Turn, the spacing moved on), or in this many seconds."""
        if not self.path.exists():
            return Turn(now)
        with self._locked() as fd:
            allowance = self._read(fd, now)
            if allowance.next_start > now:
                return allowance.next_start - now
            if allowance.interval:
                self._write(fd, replace(allowance, next_start=now + allowance.interval), now)
            return Turn(now, paced=not allowance.is_default(self.per_host))

    async def started(self, deadline: float) -> Turn:
        """The session's start, once the spacing lets it; Throttled if not before `deadline` (the
        event loop's time)."""
        loop = asyncio.get_running_loop()
        while not isinstance(turn := self.start(time.time()), Turn):
            if loop.time() + turn > deadline:
                raise Throttled(turn)
            await asyncio.sleep(turn)
        return turn

    def learn(self, turn: Turn, now: float) -> None:
        if not (turn.rate_limited or turn.paced):
            return  # a session taken at the default teaches nothing: no file, no lock
        with self._locked() as fd:
            allowance = self._read(fd, now)
            changed = learnt(allowance, turn, now=now, per_host=self.per_host)
            if changed != allowance:
                self._write(fd, changed, now)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[int]:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)  # and the lock with it

    def _read(self, fd: int, now: float) -> Allowance:
        os.lseek(fd, 0, os.SEEK_SET)
        return self._decoded(os.read(fd, 4096).decode(), now)

    def _decoded(self, text: str, now: float) -> Allowance:
        found = _decoded(text, now)
        return found[1] if found else Allowance(float(self.per_host))

    def _write(self, fd: int, allowance: Allowance, now: float) -> None:
        """The default is written as an empty file (not removed: another process may hold its lock)."""
        kept = {**asdict(allowance), "changed": now, "of": self.of}
        text = "" if allowance.is_default(self.per_host) else json.dumps(kept)
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode(), 0)


def held_below(directory: Path, now: float) -> list[tuple[str, Allowance]]:
    """Every allowance of this machine held below the default: ("<egress>|<address>", allowance)."""
    found = (_decoded(path.read_text(), now) for path in directory.glob("*.allowance"))
    return [held for held in found if held is not None]


def _decoded(text: str, now: float) -> tuple[str, Allowance] | None:
    """What an allowance file holds, unless it is empty (the default, or being written) or forgotten."""
    try:
        fields = json.loads(text)
        if now - fields.pop("changed") < FORGET_SECONDS:
            return fields.pop("of", ""), Allowance(**fields)
    except (ValueError, KeyError, TypeError):
        pass
    return None
