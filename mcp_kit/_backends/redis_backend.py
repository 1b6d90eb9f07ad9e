"""The Redis backend: every process of a deployment shares sessions, event streams, the bus, leases,
the request-state key, token buckets and a small key-value store through one Redis (or Redis Cluster).

Keys (prefix `mcp`, changeable with `?prefix=`), each session's under one hash tag so a cluster
keeps them on one node:

    mcp:{<session id>}:state        the session record (JSON), TTL = the session TTL, renewed per request
    mcp:{<session id>}:ev:<stream>  a Redis stream of one SSE stream's events (seq, data), then an end
                                    mark; at most MAX_STREAM_EVENTS entries, the oldest dropped first (a
                                    read after a dropped seq returns what is kept: its first seq tells the
                                    gap, answered 410), TTL = the resumption grace
    mcp:{<session id>}:legacy       the process holding a legacy `/sse` stream, TTL renewed while open
    mcp:{lease:<sha1 of name>}      a lease (a watcher running once per deployment), renewed by its holder
    mcp:{secret}                    the request-state signing key, created once by whichever process is first
    mcp:{rl:<sha1 of name>}         a token bucket (tokens, when), taken from by one Lua script; it expires once
                                    it would be full again (an idle bucket is a full one)
    mcp:{kv:<sha1 of namespace>}    a key-value namespace: a hash of values, and beside it (`:e`) a sorted set
                                    of each key's expiry; both expire with their last key
    mcp:bus                         the pub/sub channel every process listens on

The client comes from the URL: `redis://host:port/db`, `rediss://` (TLS), `unix:///path.sock`,
`redis+cluster://host:port` or `?cluster=1` (Redis Cluster; pub/sub goes through the node the URL
names, since a cluster broadcasts PUBLISH to every node). Every operation is bounded by
`?timeout=` seconds (default 2): past it, or with Redis gone, `BackendUnavailable`. At most
`?max_connections=` (default 128) connections per process (per node in a cluster); a call past
that waits for a free one within the timeout. The client
retries a failed command with exponential backoff, and the bus listener reconnects with backoff
(1/10 s doubling to 5 s), logging what it missed.

Must not import anything of mcp_kit outside `backends`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import anyio
import orjson

try:
    from redis import asyncio as aioredis
    from redis.asyncio.retry import Retry
    from redis.backoff import ExponentialBackoff
    from redis.exceptions import RedisError
except ImportError as missing:  # pragma: no cover - exercised only without the extra
    raise ImportError("the Redis backend needs the redis package: pip install 'redis>=5' "
                      "(in a clone: pip install -e '.[redis]')") from missing

from .base import (
    DEFAULT_MAX_KEYS,
    DEFAULT_MAX_VALUE_BYTES,
    BackendUnavailable,
    BusHandler,
    InvalidationHandler,
    Take,
    check_value,
    namespace_full,
)

logger = logging.getLogger("mcp_kit.backend")

T = TypeVar("T")

MAX_STREAM_EVENTS = 1000  # entries kept per resumable stream (approximately: MAXLEN ~)
EVENT_GRACE = 60  # seconds a stream's copy lives after its last event
LEASE_MS = 10_000  # a lease lapses this long after its holder stops renewing it
HOLDER_TTL = 90  # seconds a legacy-stream holder record lives without renewal

_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
)
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"

_NOW = ("local clock = redis.call('TIME') "
        "local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000) ")
# KEYS[1] the bucket; ARGV rate (tokens/s), burst, cost -> {allowed, tokens left, ms to wait}
_TAKE = _NOW + """
local rate, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens, at = tonumber(state[1]), tonumber(state[2])
if tokens == nil or at == nil then tokens = burst; at = now end
if now > at then tokens = math.min(burst, tokens + (now - at) * rate / 1000) end
local allowed, wait = 0, 0
if tokens >= cost then tokens = tokens - cost; allowed = 1 else wait = (cost - tokens) * 1000 / rate end
if tokens < burst then
  redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(now))
  redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
else
  redis.call('DEL', KEYS[1])
end
return {allowed, tostring(tokens), tostring(wait)}
"""
# KEYS[1] values (hash), KEYS[2] expiries (sorted set); ARGV key, value, ttl ms, max keys, only new (1/0)
# -> 1 stored, 0 full, -1 not stored (only new, and a live value is there)
_KV_SET = _NOW + """
if ARGV[5] == '1' then
  local held = redis.call('ZSCORE', KEYS[2], ARGV[1])
  if held ~= false and tonumber(held) > now then return -1 end
end
local max = tonumber(ARGV[4])
if redis.call('ZSCORE', KEYS[2], ARGV[1]) == false and redis.call('ZCARD', KEYS[2]) >= max then
  local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
  for i = 1, #stale do redis.call('HDEL', KEYS[1], stale[i]) end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= max then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
local keep = math.ceil(tonumber(last[2]) - now) + 1000
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('PEXPIRE', KEYS[2], keep)
return 1
"""
# KEYS as for _KV_SET; ARGV key -> the value, or nil when absent or expired
_KV_GET = _NOW + """
local expires = redis.call('ZSCORE', KEYS[2], ARGV[1])
if expires == false then return false end
if tonumber(expires) <= now then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return false
end
return redis.call('HGET', KEYS[1], ARGV[1])
"""
# KEYS as for _KV_SET; ARGV key -> the value (then deleted), or nil when absent or expired
_KV_TAKE = _NOW + """
local expires = redis.call('ZSCORE', KEYS[2], ARGV[1])
if expires == false then return false end
local value = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if tonumber(expires) <= now then return false end
return value
"""

DEFAULT_MAX_CONNECTIONS = 128  # per process (per node in a cluster); more requests wait for one, within the timeout


def parse_url(url: str) -> tuple[str, bool, str, float]:
    """(client URL, cluster?, key prefix, timeout) from a backend URL (`max_connections` stays in the client URL)."""
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    cluster = parts.scheme.endswith("+cluster") or query.pop("cluster", ["0"])[0] in ("1", "true", "yes")
    prefix = query.pop("prefix", ["mcp"])[0]
    timeout = float(query.pop("timeout", ["2"])[0])
    scheme = parts.scheme.removesuffix("+cluster")
    rest = urlencode({k: v[0] for k, v in query.items()})
    return urlunsplit((scheme, parts.netloc, parts.path, rest, parts.fragment)), cluster, prefix, timeout


class RedisBackend:
    """Every concern of the backend on Redis (see the module docstring)."""

    shared = True

    def __init__(self, url: str) -> None:
        self.url = url
        client_url, self.cluster, self.prefix, self.timeout = parse_url(url)
        self.process_id = uuid.uuid4().hex[:12]
        # telemetry's view of each operation: observe(system, operation, call) awaits `call` (None: not watched)
        self.observe: Callable[[str, str, Awaitable[Any]], Awaitable[Any]] | None = None
        retry = Retry(ExponentialBackoff(cap=0.5, base=0.05), 2)
        common: dict[str, Any] = {"socket_timeout": self.timeout, "socket_connect_timeout": min(self.timeout, 1.0),
                                  "retry": retry}
        limit = int(parse_qs(urlsplit(client_url).query).get("max_connections", [DEFAULT_MAX_CONNECTIONS])[0])
        if self.cluster:
            self.client: Any = aioredis.RedisCluster.from_url(client_url, max_connections=limit, **common)
            self._pubsub_client: Any = aioredis.Redis.from_url(client_url, **common)
        else:  # a bounded pool: past `limit` connections a call waits for one (within the timeout), never fails at once
            pool = aioredis.BlockingConnectionPool.from_url(client_url, max_connections=limit, timeout=self.timeout,
                                                            health_check_interval=10, **common)
            self.client = aioredis.Redis.from_pool(pool)  # owns the pool: closing the client closes it
            self._pubsub_client = self.client
        self._handlers: dict[str, list[BusHandler]] = {}
        self._listener: asyncio.Task[None] | None = None
        self._listening = asyncio.Event()
        self._channel = f"{self.prefix}:bus"
        self._take = self.client.register_script(_TAKE)
        self._kv_set = self.client.register_script(_KV_SET)
        self._kv_get = self.client.register_script(_KV_GET)
        self._kv_take = self.client.register_script(_KV_TAKE)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start listening on the bus (and check Redis answers: a warning, not a failure, when it does not)."""
        if self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(self._listen())
        try:
            with anyio.fail_after(self.timeout + 1):
                await self._listening.wait()
        except TimeoutError:
            logger.warning("Redis at %s does not answer yet; requests that need it get 503 until it does",
                           _safe(self.url))

    async def aclose(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(BaseException):
                await self._listener
            self._listener = None
        with contextlib.suppress(Exception):
            await self.client.aclose()
        if self._pubsub_client is not self.client:
            with contextlib.suppress(Exception):
                await self._pubsub_client.aclose()

    async def ping(self, timeout: float = 0.5) -> bool:
        """Whether Redis answers a PING within `timeout` seconds (readiness checks)."""
        try:
            with anyio.fail_after(timeout):
                await self.client.ping()
        except Exception:
            return False
        return True

    async def _op(self, what: str, call: Coroutine[Any, Any, T]) -> T:
        """Run one Redis call within the timeout; BackendUnavailable otherwise (seen by `observe` when set)."""
        observe = self.observe
        if observe is not None:
            return await observe("redis", what, self._bounded(what, call))  # type: ignore[no-any-return]
        return await self._bounded(what, call)

    async def _bounded(self, what: str, call: Coroutine[Any, Any, T]) -> T:
        try:
            with anyio.fail_after(self.timeout * 2):
                return await call
        except TimeoutError:
            raise BackendUnavailable(f"Redis did not answer in time ({what})") from None
        except (RedisError, OSError) as exc:
            raise BackendUnavailable(f"Redis is unavailable ({what}): {exc}") from None

    # ------------------------------------------------------------------ keys

    def _key(self, session_id: str, what: str) -> str:
        return f"{self.prefix}:{{{session_id}}}:{what}"

    # ------------------------------------------------------------------ session registry

    async def load_session(self, session_id: str, ttl: float) -> bytes | None:
        data = await self._op("load session", self.client.getex(self._key(session_id, "state"), ex=max(1, int(ttl))))
        return bytes(data) if data is not None else None

    async def save_session(self, session_id: str, record: bytes, ttl: float) -> None:
        await self._op("save session", self.client.set(self._key(session_id, "state"), record, ex=max(1, int(ttl))))

    async def delete_session(self, session_id: str) -> None:
        await self._op("delete session", self.client.delete(self._key(session_id, "state")))

    async def set_holder(self, kind: str, session_id: str, ttl: float = HOLDER_TTL) -> None:
        await self._op("set holder", self.client.set(self._key(session_id, kind), self.process_id,
                                                     ex=max(1, int(ttl))))

    async def holder(self, kind: str, session_id: str) -> str | None:
        data = await self._op("find holder", self.client.get(self._key(session_id, kind)))
        return data.decode() if isinstance(data, bytes) else data

    async def drop_holder(self, kind: str, session_id: str) -> None:
        await self._op("drop holder", self.client.delete(self._key(session_id, kind)))

    # ------------------------------------------------------------------ event log

    async def append_events(self, session_id: str, stream_id: str, events: list[tuple[int, bytes]],
                            finished: bool = False) -> None:
        key = self._key(session_id, f"ev:{stream_id}")
        pipe = self.client.pipeline(transaction=False)
        for seq, data in events:
            pipe.xadd(key, {"q": seq, "d": data}, maxlen=MAX_STREAM_EVENTS, approximate=True)
        if finished:
            pipe.xadd(key, {"end": 1}, maxlen=MAX_STREAM_EVENTS, approximate=True)
        pipe.expire(key, EVENT_GRACE)
        await self._op("append events", pipe.execute())

    async def read_events(self, session_id: str, stream_id: str, after: int, wait: float
                          ) -> tuple[list[tuple[int, bytes]], bool, bool]:
        key = self._key(session_id, f"ev:{stream_id}")
        entries = await self._op("read events", self.client.xrange(key))
        if not entries:
            return [], False, False
        found, finished, last_id = _entries(entries, after)
        if found or finished or wait <= 0:
            return found, finished, True
        block = max(1, int(min(wait, self.timeout / 2) * 1000))
        more = await self._op("follow events", self.client.xread({key: last_id}, block=block))
        for _, stream_entries in more or ():
            extra, finished, _ = _entries(stream_entries, after)
            found.extend(extra)
        return found, finished, True

    # ------------------------------------------------------------------ bus

    async def publish(self, kind: str, payload: dict[str, Any]) -> None:
        message = orjson.dumps({**payload, "k": kind, "o": self.process_id})
        await self._op(f"publish {kind}", self._pubsub_client.publish(self._channel, message))

    def on(self, kind: str, handler: BusHandler) -> None:
        self._handlers.setdefault(kind, []).append(handler)

    async def _listen(self) -> None:
        delay = 0.1
        lost = False
        while True:
            pubsub = self._pubsub_client.pubsub()
            try:
                await pubsub.subscribe(self._channel)
                if lost:
                    logger.warning("bus reconnected to Redis; messages published while it was away were missed")
                lost = False
                delay = 0.1
                self._listening.set()
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=5.0)
                    if message is not None and message.get("type") == "message":
                        self._dispatch(message["data"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._listening.clear()
                if not lost:
                    logger.warning("bus lost its Redis connection (%s); reconnecting with backoff", exc)
                lost = True
                await anyio.sleep(delay)
                delay = min(delay * 2, 5.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _dispatch(self, data: bytes) -> None:
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            logger.warning("dropping an undecodable bus message (%d bytes)", len(data))
            return
        if message.get("o") == self.process_id:
            return
        for handler in self._handlers.get(message.get("k", ""), ()):
            try:
                handler(message)
            except Exception:
                logger.exception("bus handler failed on a %s message", message.get("k"))

    # ------------------------------------------------------------------ leases

    async def run_exclusive(self, name: str, work: Callable[[], Awaitable[None]], standby: Callable[[], None]) -> None:
        key = f"{self.prefix}:{{lease:{hashlib.sha1(name.encode()).hexdigest()}}}"
        token = f"{self.process_id}:{uuid.uuid4().hex[:8]}"
        told = False
        while True:
            try:
                got = await self._op("acquire lease", self.client.set(key, token, nx=True, px=LEASE_MS))
            except BackendUnavailable as exc:
                logger.warning("lease %s: %s; retrying", name[:200], exc)
                got = False
            if not got:
                if not told:
                    told = True
                    standby()
                await anyio.sleep(LEASE_MS / 3000)
                continue
            lost = False
            async with anyio.create_task_group() as tg:
                async def renew() -> None:
                    nonlocal lost
                    while True:
                        await anyio.sleep(LEASE_MS / 3000)
                        try:
                            kept = await self._op("renew lease", self.client.eval(_RENEW, 1, key, token, LEASE_MS))
                        except BackendUnavailable:
                            kept = 1  # keep working; the lease lapses by itself if Redis stays away
                        if not kept:
                            lost = True
                            logger.warning("lease %s was lost; stopping its work until it is regained", name[:200])
                            tg.cancel_scope.cancel()
                            return

                tg.start_soon(renew)
                await work()
                tg.cancel_scope.cancel()
            if lost:
                continue
            with contextlib.suppress(BackendUnavailable):
                await self._op("release lease", self.client.eval(_RELEASE, 1, key, token))
            return

    # ------------------------------------------------------------------ request-state key

    async def shared_secret(self) -> bytes:
        key = f"{self.prefix}:{{secret}}"
        await self._op("create key", self.client.set(key, os.urandom(32).hex(), nx=True))
        value = await self._op("read key", self.client.get(key))
        return bytes.fromhex(value.decode() if isinstance(value, bytes) else value)


    # ------------------------------------------------------------------ token buckets

    async def take(self, bucket: str, rate: float, burst: float, cost: float = 1.0) -> Take:
        key = f"{self.prefix}:{{rl:{_digest(bucket)}}}"
        allowed, tokens, wait = await self._op("take tokens", self._take(keys=[key], args=[rate, burst, cost]))
        return Take(bool(int(allowed)), float(tokens), float(wait) / 1000)

    # ------------------------------------------------------------------ key-value store

    def _kv_keys(self, namespace: str) -> list[str]:
        base = f"{self.prefix}:{{kv:{_digest(namespace)}}}"
        return [base, f"{base}:e"]

    async def kv_get(self, namespace: str, key: str) -> bytes | None:
        data = await self._op("read value", self._kv_get(keys=self._kv_keys(namespace), args=[key]))
        return bytes(data) if data is not None else None

    async def kv_set(self, namespace: str, key: str, value: bytes, ttl: float, *, only_new: bool = False,
                     max_value: int = DEFAULT_MAX_VALUE_BYTES, max_keys: int = DEFAULT_MAX_KEYS,
                     evictable: bool = True) -> bool:
        # `evictable` changes nothing: Redis keeps a value until its TTL (its default maxmemory-policy evicts nothing)
        check_value(namespace, key, value, max_value)
        ttl_ms = max(1, int(ttl * 1000))
        stored = int(await self._op("write value", self._kv_set(keys=self._kv_keys(namespace),
                                                                args=[key, value, ttl_ms, max_keys, int(only_new)])))
        if stored == 0:
            raise namespace_full(namespace, max_keys)
        return stored == 1

    async def kv_take(self, namespace: str, key: str) -> bytes | None:
        data = await self._op("take value", self._kv_take(keys=self._kv_keys(namespace), args=[key]))
        return bytes(data) if data is not None else None

    async def kv_delete(self, namespace: str, key: str) -> None:
        values, expiries = self._kv_keys(namespace)
        pipe = self.client.pipeline(transaction=False)
        pipe.hdel(values, key)
        pipe.zrem(expiries, key)
        await self._op("delete value", pipe.execute())

    async def kv_clear(self, namespace: str) -> None:
        await self._op("clear values", self.client.delete(*self._kv_keys(namespace)))

    async def invalidate(self, namespace: str) -> None:
        await self.kv_clear(namespace)
        await self.publish("i", {"ns": namespace})

    def on_invalidate(self, handler: InvalidationHandler) -> None:
        self.on("i", lambda message: handler(str(message.get("ns", ""))))


def _digest(name: str) -> str:
    """A short, brace-free stand-in for a caller-chosen name inside a key's hash tag."""
    return hashlib.sha1(name.encode()).hexdigest()[:24]


def _entries(entries: list[Any], after: int) -> tuple[list[tuple[int, bytes]], bool, Any]:
    found: list[tuple[int, bytes]] = []
    finished = False
    last_id: Any = "0-0"
    for entry_id, fields in entries:
        last_id = entry_id
        if b"end" in fields:
            finished = True
            continue
        seq = int(fields[b"q"])
        if seq > after:
            found.append((seq, bytes(fields[b"d"])))
    return found, finished, last_id


def _safe(url: str) -> str:
    """The URL without its password, for logs."""
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return url
