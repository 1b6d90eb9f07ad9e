"""With Redis down, task requests are answered as every other request needing Redis is: retry shortly.

Over the method layer (stdio, in memory) that is -32603 with `data.retryAfter` and a message naming
the task store; over HTTP, 503 with `Retry-After`. An outage is logged as a warning, never with a
traceback. Each test starts its own Redis and stops it on purpose.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest

from mcp_kit import MCPServer
from mcp_kit._backends.redis_backend import RedisBackend
from mcp_kit._protocol.errors import MCPError
from mcp_kit.tasks._redis_store import RedisTaskStore
from mcp_kit.testing import connect
from tests.helpers.live_http import serve
from tests.helpers.redis_support import RedisProcess, redis_server, require_redis
from tests.tasks.test_methods import meta, modern

pytestmark = pytest.mark.anyio


@pytest.fixture
def own_redis() -> Iterator[RedisProcess]:
    require_redis()
    with redis_server() as server:
        yield server


def build(store: RedisTaskStore | None = None) -> MCPServer:
    app = MCPServer("outage", task_store=store)

    @app.tool(task="optional")
    async def quick() -> str:
        """Done at once."""
        return "done"

    return app


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.exc_info]


async def test_task_requests_with_redis_down_answer_retry_shortly_without_a_traceback(
        own_redis: RedisProcess, caplog: pytest.LogCaptureFixture) -> None:
    backend = RedisBackend(own_redis.url + "?timeout=0.5")
    try:
        app = build(RedisTaskStore(backend))
        async with connect(app) as client:
            created = await modern(client, "tools/call", {"name": "quick", "arguments": {}})
            assert created["resultType"] == "task"
            own_redis.stop()
            with caplog.at_level(logging.WARNING):
                for method, params in (("tools/call", {"name": "quick", "arguments": {}}),
                                       ("tasks/get", {"taskId": created["taskId"]}),
                                       ("tasks/cancel", {"taskId": created["taskId"]})):
                    with pytest.raises(MCPError) as down:
                        await modern(client, method, params)
                    assert down.value.code == -32603, method
                    assert down.value.data == {"retryAfter": 2}, method
                    assert "task store is unavailable" in down.value.message and "Redis" in down.value.message
            assert tracebacks(caplog) == []
            assert any("unavailable" in record.getMessage() for record in caplog.records)
    finally:
        await backend.aclose()


async def test_a_task_call_over_http_with_redis_down_is_503_with_retry_after(
        own_redis: RedisProcess, caplog: pytest.LogCaptureFixture) -> None:
    app = build()
    async with serve(app, backend=own_redis.url + "?timeout=0.5") as live:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "quick"}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "quick", "arguments": {},
                                                                             "_meta": meta()}}
        async with httpx.AsyncClient(timeout=30) as http:
            before = await http.post(live.url, headers=headers, json=body)
            assert before.status_code == 200 and before.json()["result"]["resultType"] == "task"
            own_redis.stop()
            with caplog.at_level(logging.WARNING):
                refused = await http.post(live.url, headers=headers, json=body)
            assert refused.status_code == 503 and refused.headers["retry-after"] == "2"
            error = refused.json()["error"]
            assert error["code"] == -32603 and "task store is unavailable" in error["message"]
            assert tracebacks(caplog) == []
