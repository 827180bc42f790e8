"""Politeness across machines: at most `per_host` sessions at once from one egress to one MX
address, counted in Redis by every process of every machine that shares it (docs/deep.md,
"More than one machine").

Each session holds a lease: a member of a sorted set per (egress, address) whose score is when
it expires (Redis's own clock, so machines' clocks need not agree). Taking one drops the expired
members and adds ours only while fewer than `per_host` remain, in one script (atomic). A held
lease is renewed every third of its life; a process that dies stops renewing it, and it frees
itself within `ttl` seconds. Without Redis (the embedded default) the lock files of
smtp_scheduling.HostSlots count one machine's sessions, which is enough while each machine has its own
sending address.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import secrets
from collections.abc import AsyncIterator

import redis.asyncio as aioredis

# A lease not renewed frees itself after this many seconds (VERIFIER_SMTP_LEASE_SECONDS).
LEASE_SECONDS = 5.0
_POLL_SECONDS = 0.02
# Redis connections one event loop (a bulk chunk's, a request's) uses for its leases at most.
POOL_CONNECTIONS = 16
_TAKE = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], t + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) * 1000) + 1000)
  return 1
end
return 0
"""
_RENEW = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  redis.call('ZADD', KEYS[1], 'XX', t + tonumber(ARGV[1]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[1]) * 1000) + 1000)
  return 1
end
return 0
"""


def lease_key(address: str, egress: str) -> str:
    return f"verifier:smtp-lease:{egress or 'direct'}|{ipaddress.ip_address(address).exploded}"


class RedisLeases:
    """The cluster-wide count (module docstring). One instance serves one event loop."""

    def __init__(self, url: str, per_host: int, *, ttl: float = LEASE_SECONDS) -> None:
        self.url = url
        self.per_host = per_host
        self.ttl = ttl
        self._client: aioredis.Redis | None = None

    @contextlib.asynccontextmanager
    async def held(self, address: str, egress: str = "") -> AsyncIterator[None]:
        client = self._connected()
        key, token = lease_key(address, egress), secrets.token_hex(8)
        while not await client.eval(_TAKE, 1, key, self.per_host, self.ttl, token):
            await asyncio.sleep(_POLL_SECONDS)
        renewing = asyncio.create_task(self._renew(client, key, token))
        try:
            yield
        finally:
            renewing.cancel()
            await client.zrem(key, token)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose(close_connection_pool=True)
            self._client = None

    def _connected(self) -> aioredis.Redis:
        """One client per event loop, on a bounded pool whose callers wait for a free connection:
        hundreds of sessions at once take turns on a few connections rather than open one each."""
        if self._client is None:
            pool = aioredis.BlockingConnectionPool.from_url(self.url, max_connections=POOL_CONNECTIONS, timeout=None)
            self._client = aioredis.Redis(connection_pool=pool)
        return self._client

    async def _renew(self, client: aioredis.Redis, key: str, token: str) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            with contextlib.suppress(OSError, aioredis.RedisError):
                await client.eval(_RENEW, 1, key, self.ttl, token)
