"""A task-augmented call of a mounted proxy's tool runs as a plain call: the parent's `tasks/*` use its own
store, so an upstream task would be orphaned. The `task` param (2025-11-25) and the tasks extension in the
request's capabilities (2026-07-28) do not reach the upstream, the parent lists the proxied tools without
task support and declares no tasks for them. In front of the kit tasks upstream over stdio."""

from __future__ import annotations

import sys

import pytest

from mcp_kit import MCPServer, proxy
from mcp_kit.tasks._wire import TASKS_EXTENSION
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

TASKS = [sys.executable, "-m", "tests.helpers.kit_tasks_upstream"]


def hub() -> MCPServer:
    app = MCPServer("hub")

    @app.tool
    def own() -> str:
        return "own"

    app.mount(proxy(TASKS), "up")
    return app


async def test_a_task_param_on_a_mounted_proxy_tool_gives_a_plain_result() -> None:
    async with connect(hub(), protocol_version="2025-11-25") as client:
        assert "tasks" not in client.initialize_result["capabilities"]
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert "taskSupport" not in (tools["up_job"].get("execution") or {})
        await client.call_tool("up_open_gate", {})
        result = await client.request("tools/call", {"name": "up_job", "arguments": {"n": 1}, "task": {"ttl": 60000}})
        assert "task" not in result and result["content"][0]["text"] == "done 1"


async def test_a_2026_client_declaring_tasks_gets_a_plain_result_from_a_mounted_proxy_tool() -> None:
    async with connect(hub(), stateless=True) as client:
        await client.call_tool("up_open_gate", {})
        meta = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
        result = await client.request("tools/call", {"name": "up_job", "arguments": {"n": 2}, "_meta": meta})
        assert result.get("resultType", "complete") == "complete" and result["content"][0]["text"] == "done 2"
