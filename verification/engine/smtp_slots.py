"""SMTP slots: how many sessions this machine may hold at once to one MX address.

At most `per_host` sessions at once from this machine to one MX address, whatever the number of
processes. Each session holds one of `per_host` lock files for its address (`fcntl.flock`,
non-blocking): a lock is per machine by nature (the lock directory is local), the kernel drops it
when its process dies however it dies (no lease to expire or tune, nothing to clean up after
kill -9), and it costs no database or Redis round trip. One machine's limit is all we promise
(docs/deep.md): a second machine has its own IP address, which the MX counts apart.

With egresses (egress.py), the count is per egress and address: what an MX counts is the sending
address. Where machines share an egress, RedisLeases (leases.py) count across them instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import ipaddress
import math
import os
import random
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol

from verification.engine.allowance import AllowanceFile, Turn

_SLOT_POLL_SECONDS = 0.02


class Slots(Protocol):
    """Politeness: at most `per_host` sessions at once per egress and MX address, fewer and spaced
    apart while the address's allowance (allowance.py) says so. `held` raises Throttled rather than
    wait for a start past `deadline` (the event loop's time)."""

    per_host: int

    def held(
        self, address: str, egress: str = "", *, deadline: float = math.inf
    ) -> AbstractAsyncContextManager[Turn]: ...

    async def allowed(self, address: str, egress: str = "") -> int:
        """Sessions at once the address's allowance lets now (per_host at the default)."""
        ...

    async def close(self) -> None: ...


def lock_slot(directory: str | Path, name: str, count: int) -> int | None:
    """One of `name`'s `count` per-machine lock files, if one is free (its descriptor: close it to
    give the slot back; the kernel does so when the process dies), else None at once. HostSlots
    takes them per MX address; the bulk workers' deep-chunk gate (jobs/deep_slots.py) by name."""
    for slot in random.sample(range(count), count):
        path = Path(directory) / f"{name}.{slot}"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:  # made on first use, not asked after at every session (a stat and a raise)
            Path(directory).mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return fd
    return None


class HostSlots:
    """At most `per_host` sessions at once to one address from this machine (module docstring), as
    many as the address's allowance lets, spaced as it says: a file beside the lock files."""

    def __init__(self, directory: str | Path, per_host: int) -> None:
        self.directory = Path(directory)
        self.per_host = per_host
        self.directory.mkdir(parents=True, exist_ok=True)

    @contextlib.asynccontextmanager
    async def held(self, address: str, egress: str = "", *, deadline: float = math.inf) -> AsyncIterator[Turn]:
        pace = self._pace(address, egress)
        fd = await self._acquire(_slot_name(address, egress), pace)
        try:
            turn = await pace.started(deadline)
            yield turn
            pace.learn(turn, time.time())
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    async def allowed(self, address: str, egress: str = "") -> int:
        return self._pace(address, egress).sessions(time.time())

    async def close(self) -> None:
        return None  # nothing held between sessions

    def _pace(self, address: str, egress: str) -> AllowanceFile:
        path = self.directory / f"{_slot_name(address, egress)}.allowance"
        return AllowanceFile(path, self.per_host, of=f"{egress or 'direct'}|{address}")

    async def _acquire(self, name: str, pace: AllowanceFile) -> int:
        while (fd := lock_slot(self.directory, name, pace.sessions(time.time()))) is None:
            await asyncio.sleep(_SLOT_POLL_SECONDS)
        return fd


def _slot_name(address: str, egress: str) -> str:
    """The lock and allowance files' name for (egress, address); the default egress keeps the address's own."""
    name = ipaddress.ip_address(address).exploded.replace(":", "-")
    return hashlib.sha256(egress.encode()).hexdigest()[:12] + "-" + name if egress else name
