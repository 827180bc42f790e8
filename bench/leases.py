"""What a politeness lease costs a session: take and give back one per session, N times, in Redis
(verification/engine/leases.py) and in lock files (the embedded default), medians of 3 rounds.

.venv/bin/python -m bench.leases [REDIS_URL]   (default redis://127.0.0.1:6379/13, the bench's db)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time

from verification.engine.leases import RedisLeases
from verification.engine.smtp_slots import HostSlots, Slots

SESSIONS = 2000


async def per_session(slots: Slots) -> float:
    """Microseconds a session spends taking and giving back its lease (no contention)."""
    started = time.perf_counter()
    for _ in range(SESSIONS):
        async with slots.held("192.0.2.25", "bind:192.0.2.50"):
            pass
    await slots.close()
    return (time.perf_counter() - started) / SESSIONS * 1e6


def main(url: str = "redis://127.0.0.1:6379/13") -> None:
    with tempfile.TemporaryDirectory(prefix="bench-leases-") as folder:
        for name, make in (("Redis lease", lambda: RedisLeases(url, 3)), ("lock file", lambda: HostSlots(folder, 3))):
            rounds = [asyncio.run(per_session(make())) for _ in range(3)]
            print(
                f"{name}: median {statistics.median(rounds):.0f} µs a session "
                f"(min {min(rounds):.0f}, max {max(rounds):.0f}; load {os.getloadavg()[0]:.1f})"
            )


if __name__ == "__main__":
    main(*sys.argv[1:])
