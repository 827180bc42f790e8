"""Politeness across machines: at most `per_host` sessions at once from one egress to one MX
address, counted in Redis by every process of every machine that shares it (docs/deep.md,
"More than one machine").

Each session holds a lease: a member of a sorted set per (egress, address) whose score is when
it expires (Redis's own clock, so machines' clocks need not agree). Taking one drops the expired
members and adds ours only while fewer than `per_host` remain, in one script (atomic). A held
lease is renewed every third of its life; a process that dies stops renewing it, and it frees
itself within `ttl` seconds.

The address's allowance (allowance.py: fewer sessions at once and spaced starts, after it refused
us for our rate) is a hash beside the leases, read by the same script that takes a lease, so a
lease is only taken within it; what a session teaches is written back in a transaction (WATCH)
that applies allowance.py's rules on Redis's time, and the hash expires FORGET_SECONDS after its
last change, leaving a forgotten address at the default. Without Redis (the embedded default) the lock files of
smtp_slots.HostSlots count one machine's sessions, which is enough while each machine has its own
sending address.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import math
import secrets
from collections.abc import AsyncIterator, Mapping
from dataclasses import asdict, fields

import redis.asyncio as aioredis
from redis.exceptions import WatchError

from verification.engine.allowance import FORGET_SECONDS, Allowance, Throttled, Turn, learnt

# A lease not renewed frees itself after this many seconds (VERIFIER_SMTP_LEASE_SECONDS).
LEASE_SECONDS = 5.0
_POLL_SECONDS = 0.02
# Redis connections one event loop (a bulk chunk's, a request's) uses for its leases at most.
POOL_CONNECTIONS = 16
# -> {1, now in µs, 1 if the allowance is held below the default} when the lease is taken;
# {0, µs until the spacing lets a session start} or {0, -1} when every allowed lease is held.
_TAKE = """
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t)
local pace = redis.call('HMGET', KEYS[2], 'limit', 'interval', 'next_start')
local allowed = tonumber(ARGV[1])
if pace[1] then allowed = math.max(1, math.min(allowed, math.floor(tonumber(pace[1])))) end
local interval = tonumber(pace[2] or '0')
if pace[3] and t < tonumber(pace[3]) then return {0, math.ceil((tonumber(pace[3]) - t) * 1000000)} end
if redis.call('ZCARD', KEYS[1]) >= allowed then return {0, -1} end
redis.call('ZADD', KEYS[1], t + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) * 1000) + 1000)
if interval > 0 then redis.call('HSET', KEYS[2], 'next_start', tostring(t + interval)) end
return {1, tonumber(now[1]) * 1000000 + tonumber(now[2]), pace[1] and 1 or 0}
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


ALLOWANCE_PREFIX = "verifier:smtp-allowance:"  # then "<egress>|<address>"


def allowance_key(address: str, egress: str) -> str:
    return f"{ALLOWANCE_PREFIX}{egress or 'direct'}|{ipaddress.ip_address(address).exploded}"


class RedisLeases:
    """The cluster-wide count (module docstring). One instance serves one event loop."""

    def __init__(self, url: str, per_host: int, *, ttl: float = LEASE_SECONDS) -> None:
        self.url = url
        self.per_host = per_host
        self.ttl = ttl
        self._client: aioredis.Redis | None = None

    @contextlib.asynccontextmanager
    async def held(self, address: str, egress: str = "", *, deadline: float = math.inf) -> AsyncIterator[Turn]:
        """A lease within the address's allowance; Throttled when its spacing passes `deadline`."""
        client = self._connected()
        key, pace, token = lease_key(address, egress), allowance_key(address, egress), secrets.token_hex(8)
        turn = await self._take(client, key, pace, token, deadline)
        renewing = asyncio.create_task(self._renew(client, key, token))
        try:
            yield turn
            with contextlib.suppress(OSError, aioredis.RedisError):  # a lesson lost costs no session
                await self._learn(client, pace, turn)
        finally:
            renewing.cancel()
            await client.zrem(key, token)

    async def allowed(self, address: str, egress: str = "") -> int:
        limit = await self._connected().hget(allowance_key(address, egress), "limit")
        return self.per_host if limit is None else max(1, min(self.per_host, int(float(limit))))

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose(close_connection_pool=True)
            self._client = None

    async def _take(self, client: aioredis.Redis, key: str, pace: str, token: str, deadline: float) -> Turn:
        loop = asyncio.get_running_loop()
        while True:
            taken, value, *paced = await client.eval(_TAKE, 2, key, pace, self.per_host, self.ttl, token)
            if taken:
                return Turn(value / 1e6, paced=bool(paced[0]))
            wait = value / 1e6 if value >= 0 else _POLL_SECONDS
            if value >= 0 and loop.time() + wait > deadline:
                raise Throttled(wait)
            await asyncio.sleep(wait)

    async def _learn(self, client: aioredis.Redis, pace: str, turn: Turn) -> None:
        """Apply allowance.learnt on Redis's time, in a transaction that starts again if another
        process changed the allowance meanwhile."""
        if not (turn.rate_limited or turn.paced):
            return  # a session taken at the default teaches nothing: no round trip
        async with client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(pace)
                    current = allowance_from(await pipe.hgetall(pace), self.per_host)
                    seconds, micros = await pipe.time()
                    changed = learnt(current, turn, now=seconds + micros / 1e6, per_host=self.per_host)
                    pipe.multi()
                    if changed.is_default(self.per_host):
                        pipe.delete(pace)
                    elif changed != current:
                        pipe.hset(pace, mapping={name: repr(value) for name, value in asdict(changed).items()})
                        pipe.pexpire(pace, int(FORGET_SECONDS * 1000))
                    await pipe.execute()
                    return
                except WatchError:
                    continue

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


def allowance_from(stored: Mapping[bytes | str, bytes | str], per_host: int) -> Allowance:
    """The allowance a hash holds (none: the default)."""
    if not stored:
        return Allowance(float(per_host))
    return Allowance(**{f.name: float(stored.get(f.name.encode(), b"0")) for f in fields(Allowance)})
