"""Tasks are bounded per caller, not only per server: one anonymous client cannot take every task place.

The caller is the OAuth subject, else the session, else (2026-07-28 over HTTP, a connection per
request) the client's address. A task counts until its TTL ends, finished or not, in memory and in
Redis (where the count is shared by every process). HTTP requests come from chosen client addresses
through httpx's ASGI transport, with the app's lifespan running.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from mcp_kit import Context, MCPServer
from mcp_kit._backends.redis_backend import RedisBackend
from mcp_kit.tasks import InMemoryTaskStore, TaskLimitReached
from mcp_kit.tasks._methods import tasks_of
from mcp_kit.tasks._redis_store import RedisTaskStore
from mcp_kit.testing import connect
from tests.helpers.redis_support import RedisProcess
from tests.tasks.test_methods import meta
from tests.tasks.test_store import Clock, new

pytestmark = pytest.mark.anyio

ATTACKER, NEIGHBOUR = "203.0.113.7", "198.51.100.9"


def build(limit: int | None = None) -> MCPServer:
    app = MCPServer("caller-limits") if limit is None else MCPServer("caller-limits", max_tasks_per_caller=limit)

    @app.tool(task="optional")
    async def quick() -> str:
        """Done at once (a finished task still counts until its TTL ends)."""
        return "done"

    return app


@contextlib.asynccontextmanager
async def http_from(asgi: Any, address: str) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=asgi, client=(address, 40_000))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        yield client


async def call_quick(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.post("/mcp", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "quick"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
              "params": {"name": "quick", "arguments": {}, "_meta": meta()}})
    assert response.status_code == 200, response.text
    return response.json()["result"]  # type: ignore[no-any-return]


async def test_one_anonymous_http_client_cannot_take_every_task_place() -> None:
    app = build()  # the default: 100 tasks per caller
    asgi = app.asgi(host="127.0.0.1")
    async with asgi.router.lifespan_context(asgi.starlette):
        async with http_from(asgi, ATTACKER) as attacker:
            created = [await call_quick(attacker) for _ in range(100)]
            assert all(result["resultType"] == "task" for result in created)
            refused = await call_quick(attacker)
            assert refused.get("isError") is True and "taskId" not in refused, refused
            text = refused["content"][0]["text"]
            assert "100 tasks" in text and "limit per caller" in text and "can start in" in text
        async with http_from(asgi, NEIGHBOUR) as neighbour:  # another client is still served
            assert (await call_quick(neighbour))["resultType"] == "task"
        record = await tasks_of(app).store.get(created[0]["taskId"])
        assert record is not None and getattr(record, "caller", None) == f"address:{ATTACKER}"


async def test_handshake_sessions_and_principals_are_callers_of_their_own() -> None:
    app = build(limit=1)
    async with connect(app) as first, connect(app) as second:
        for client in (first, second):  # 2025-11-25: each session is a caller
            assert "task" in await client.request("tools/call", {"name": "quick", "arguments": {}, "task": {}})
        refused = await first.request("tools/call", {"name": "quick", "arguments": {}, "task": {}})
        assert refused["isError"] is True and "limit per caller" in refused["content"][0]["text"]


def test_the_caller_identity_prefers_the_principal_then_the_session_then_the_address() -> None:
    from mcp_kit._protocol.callers import caller_identity, caller_of, client_address_scope, network_of

    alice = SimpleNamespace(identity=("https://as.example", "sub", "alice"))
    robot = SimpleNamespace(identity=("https://as.example", "client", "robot"))
    posing = SimpleNamespace(identity=("https://as.example", "sub", "client:robot"))  # a subject shaped like a client
    with client_address_scope(ATTACKER):
        assert caller_identity(alice, "s1", True) == 'principal:["https://as.example","sub","alice"]'
        assert caller_identity(None, "s1", True) == f"address:{ATTACKER}"
    assert caller_identity(robot, "s1", False) == 'principal:["https://as.example","client","robot"]'
    assert caller_identity(posing, "s1", False) != caller_identity(robot, "s1", False)
    assert caller_identity(None, "s1", False) == "session:s1"
    # one IPv6 host usually holds a /64: its addresses are one caller; an IPv4-mapped address is its IPv4
    assert network_of("2001:db8:1:2::1") == network_of("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert network_of("::ffff:203.0.113.7") == ATTACKER

    def ctx(version: str) -> Any:
        return SimpleNamespace(principal=None, session_id="s1", protocol_version=version)

    with client_address_scope(ATTACKER):  # a 2026-07-28 HTTP request: its connection is its own
        assert caller_of(ctx("2026-07-28")) == f"address:{ATTACKER}"
        assert caller_of(ctx("2025-11-25")) == "session:s1"  # a handshake session outlives the request
    assert caller_of(ctx("2026-07-28")) == "session:s1"  # stdio: the connection is the one client


async def test_a_caller_s_finished_tasks_count_until_they_expire() -> None:
    clock = Clock()
    store = InMemoryTaskStore(max_tasks_per_caller=2, clock=clock)
    first = new(clock, owner=None, ttl_ms=1_000)
    await store.create(_by(first, "address:a"))
    await store.create(_by(new(clock, owner=None), "address:a"))
    await store.finish(first.task_id, "completed", result={"content": []})
    with pytest.raises(TaskLimitReached) as refused:
        await store.create(_by(new(clock, owner=None), "address:a"))
    assert refused.value.bound == "caller" and "can start in 1 s" in str(refused.value)
    await store.create(_by(new(clock, owner=None), "address:b"))  # another caller
    await store.create(new(clock, owner=None))  # a record without a caller counts for nobody
    clock.advance(1_000)  # the first task expires: its place frees
    await store.create(_by(new(clock, owner=None), "address:a"))


@pytest.fixture
async def backends(redis: RedisProcess) -> AsyncIterator[tuple[RedisBackend, RedisBackend]]:
    here, there = RedisBackend(redis.url), RedisBackend(redis.url)
    await here.client.flushdb()
    try:
        yield here, there
    finally:
        await here.aclose()
        await there.aclose()


async def test_the_per_caller_limit_holds_across_processes_in_redis(
        backends: tuple[RedisBackend, RedisBackend]) -> None:
    clock = Clock()
    here, there = (RedisTaskStore(backend, max_tasks_per_caller=2, clock=clock) for backend in backends)
    first = _by(new(clock, owner=None, ttl_ms=1_000), "address:a")
    await here.create(first)
    await there.create(_by(new(clock, owner=None), "address:a"))
    for store in (here, there):  # each process sees the caller's two tasks, wherever they were created
        with pytest.raises(TaskLimitReached) as refused:
            await store.create(_by(new(clock, owner=None), "address:a"))
        assert refused.value.bound == "caller"
    await there.create(_by(new(clock, owner=None), "address:b"))
    assert await here.delete(first.task_id)  # a deleted task frees its place
    await there.create(_by(new(clock, owner=None, ttl_ms=1_000), "address:a"))
    clock.advance(1_000)  # ... and so does an expired one
    await here.create(_by(new(clock, owner=None), "address:a"))
    assert await here.callers.count("address:a", clock.ms) == 2


def _by(record: Any, caller: str) -> Any:
    import dataclasses

    return dataclasses.replace(record, caller=caller)


async def test_the_route_records_the_caller_of_a_task() -> None:
    from mcp_kit._app.methods import ROUTES
    from tests.tasks.test_methods import _Scope

    app = build(limit=5)
    async with app.running():
        alice = Context(
            _Scope(),
            1,
            {},
            SimpleNamespace(identity=("as", "sub", "alice"), subject="alice", client_id="app", issuer="as"),
        )  # type: ignore[arg-type]
        created = await ROUTES["tools/call"](app, {"name": "quick", "arguments": {}}, alice)
        record = await tasks_of(app).store.get(created["taskId"])
        assert record is not None and record.caller == 'principal:["as","sub","alice"]'
