"""Hold politeness leases in a process of its own until killed (the test of a dead process's leases).

python -m tests.support.lease_hold REDIS_URL ADDRESS EGRESS COUNT TTL -> prints "held" once it
holds COUNT leases on (EGRESS, ADDRESS), then holds them until it is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys

from verification.engine.leases import RedisLeases


async def hold(url: str, address: str, egress: str, count: int, ttl: float) -> None:
    leases = RedisLeases(url, count, ttl=ttl)
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(count):
            await stack.enter_async_context(leases.held(address, egress))
        print("held", flush=True)
        await asyncio.Event().wait()  # never set: the leases are renewed until the process dies


if __name__ == "__main__":
    url, address, egress, count, ttl = sys.argv[1:]
    asyncio.run(hold(url, address, egress, int(count), float(ttl)))
