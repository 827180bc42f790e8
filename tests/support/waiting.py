"""Waiting for a condition, never for a fixed time: the one place in the suite that sleeps between looks.

A test that waits for something another thread or process does (a callback arriving, a server
answering, a lease renewed on Redis's clock) asks for the condition again every `every` seconds until
it holds, and fails naming `what` when `timeout` passes first. Clocks the test process owns move with
time_machine instead (and time.monotonic, which time_machine leaves alone, by monkeypatch: see
tests/verification/test_mx_hosts.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


def wait_until[T](condition: Callable[[], T], what: str, timeout: float, *, every: float = 0.02) -> T:
    """The condition's first true value, asked for every `every` seconds; TimeoutError after `timeout`."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        time.sleep(every)
    return value


async def wait_until_async[T](
    condition: Callable[[], Awaitable[T]], what: str, timeout: float, *, every: float = 0.02
) -> T:
    """wait_until inside an event loop: the loop's other tasks run between the looks."""
    deadline = time.monotonic() + timeout
    while not (value := await condition()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        await asyncio.sleep(every)
    return value
