"""`RedisCallerCounter`: the per-caller counter of `mcp_kit._protocol.callers` in Redis, shared by every process.

One sorted set per caller and counter name, `<prefix>:callers:<name>:<sha256 of the caller>`
(member: the entry, score: when it lapses, in ms). Counting is one Lua script, so two processes
can never both take a caller's last place: drop the lapsed entries, count, refuse (answering when
the earliest entry lapses) or add. The key expires with its last entry (a relative TTL, since the
times are the caller's clock, which need not be Redis's). A caller's identity is
hashed in the key: it may be long, or carry characters (braces) that mean something to a cluster.

Must not import anything of mcp_kit outside `backends`.
"""

from __future__ import annotations

import hashlib

from .redis_backend import RedisBackend

# KEYS[1] the caller's set; ARGV: now_ms, until_ms, entry, limit, ms from now until until_ms.
# -1 when counted, else when the earliest entry lapses. The key's TTL is relative (PEXPIRE, never
# PEXPIREAT): the times are the store's clock, which need not be Redis's.
_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then return -1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  return redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[5]) then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
return -1
"""


class RedisCallerCounter:
    """Entries per caller in Redis (see the module docstring); `name` keeps counters apart ("tasks")."""

    def __init__(self, backend: RedisBackend, name: str) -> None:
        self.backend = backend
        self.client = backend.client
        self.name = name

    def key(self, caller: str) -> str:
        return f"{self.backend.prefix}:callers:{self.name}:{hashlib.sha256(caller.encode()).hexdigest()[:32]}"

    async def acquire(self, caller: str, entry: str, *, until_ms: int, limit: int, now_ms: int) -> int | None:
        lasts_ms = max(1, until_ms - now_ms)
        answer = await self.backend._op("count caller", self.client.eval(_ACQUIRE, 1, self.key(caller), now_ms,
                                                                          until_ms, entry, limit, lasts_ms))
        earliest = int(float(answer))
        return None if earliest < 0 else earliest

    async def release(self, caller: str, entry: str) -> None:
        await self.backend._op("uncount caller", self.client.zrem(self.key(caller), entry))

    async def count(self, caller: str, now_ms: int) -> int:
        key = self.key(caller)
        await self.backend._op("count caller", self.client.zremrangebyscore(key, "-inf", now_ms))
        return int(await self.backend._op("count caller", self.client.zcard(key)))
