"""How a task-augmented call is admitted: answered at once, always.

- With every `max_running_tasks` place taken, a new task is created and answered (`working`, its
  status message saying it waits) and starts when a place frees; cancelled while it waits, it
  never starts and takes no place.
- 2025-11-25: a `task` param on a tool without task support is -32601 saying why (2026-07-28
  ignores the param, as SEP-2663 says).

Tools wait on events the test opens, so nothing depends on timing.
"""

from __future__ import annotations

import anyio
import pytest

from mcp_kit import MCPServer
from mcp_kit._protocol.errors import MCPError
from mcp_kit.testing import connect
from tests.tasks.test_methods import modern, settle

pytestmark = pytest.mark.anyio


def build() -> tuple[MCPServer, dict[str, anyio.Event], dict[str, anyio.Event]]:
    app = MCPServer("admission", max_running_tasks=1)
    started = {label: anyio.Event() for label in "abcd"}
    release = {label: anyio.Event() for label in "abcd"}

    @app.tool(task="optional")
    async def job(label: str) -> str:
        """Runs until the test releases it."""
        started[label].set()
        await release[label].wait()
        return f"job {label}"

    @app.tool
    def plain(x: int) -> int:
        """Never a task."""
        return x + 1

    return app, started, release


async def test_a_call_past_the_running_limit_is_queued_and_answered_at_once() -> None:
    app, started, release = build()
    async with connect(app) as client:
        first = await modern(client, "tools/call", {"name": "job", "arguments": {"label": "a"}})
        await started["a"].wait()
        with anyio.fail_after(5):  # answered, not left waiting for the running task to end
            second = await modern(client, "tools/call", {"name": "job", "arguments": {"label": "b"}})
            third = await modern(client, "tools/call", {"name": "job", "arguments": {"label": "c"}})
        for queued in (second, third):
            assert queued["resultType"] == "task" and queued["status"] == "working"
            assert "Waiting to start" in queued["statusMessage"]
        assert not started["b"].is_set()
        await modern(client, "tasks/cancel", {"taskId": third["taskId"]})  # cancelled while it waits
        release["a"].set()
        assert (await settle(client, first["taskId"]))["result"]["content"][0]["text"] == "job a"
        with anyio.fail_after(5):
            await started["b"].wait()  # a place freed: the queued task runs
        running = await modern(client, "tasks/get", {"taskId": second["taskId"]})
        assert running["status"] == "working" and "statusMessage" not in running
        release["b"].set()
        assert (await settle(client, second["taskId"]))["result"]["content"][0]["text"] == "job b"
        fourth = await modern(client, "tools/call", {"name": "job", "arguments": {"label": "d"}})
        with anyio.fail_after(5):
            await started["d"].wait()  # the cancelled task took no place
        assert not started["c"].is_set()
        assert (await modern(client, "tasks/get", {"taskId": third["taskId"]}))["status"] == "cancelled"
        release["d"].set()
        await settle(client, fourth["taskId"])


async def test_a_handshake_era_call_past_the_running_limit_is_queued_too() -> None:
    app, started, release = build()
    async with connect(app) as client:
        await client.request("tools/call", {"name": "job", "arguments": {"label": "a"}, "task": {}})
        await started["a"].wait()
        with anyio.fail_after(5):
            queued = (await client.request("tools/call", {"name": "job", "arguments": {"label": "b"}, "task": {}}))[
                "task"
            ]
        assert queued["status"] == "working" and "Waiting to start" in queued["statusMessage"]
        release["a"].set()
        release["b"].set()
        with anyio.fail_after(5):
            result = await client.request("tasks/result", {"taskId": queued["taskId"]})
        assert result["content"][0]["text"] == "job b"


async def test_a_task_param_on_a_tool_without_task_support_is_refused_in_2025_11_25() -> None:
    app, _, _ = build()
    async with connect(app) as client:
        with pytest.raises(MCPError) as refused:
            await client.request("tools/call", {"name": "plain", "arguments": {"x": 1}, "task": {"ttl": 60_000}})
        assert refused.value.code == -32601
        assert (
            "'plain' does not support tasks" in refused.value.message
            and "without the 'task' param" in refused.value.message
        )
        assert (await client.request("tools/call", {"name": "plain", "arguments": {"x": 1}}))["content"][0][
            "text"
        ] == "2"
        # 2026-07-28 ignores a leftover 2025-11-25 task param (SEP-2663)
        plain = await modern(client, "tools/call", {"name": "plain", "arguments": {"x": 1}, "task": {"ttl": 60_000}})
        assert plain["content"][0]["text"] == "2" and "taskId" not in plain
    async with connect(app, protocol_version="2025-06-18") as older:  # no tasks in that version: nothing to refuse
        assert (await older.request("tools/call", {"name": "plain", "arguments": {"x": 1}, "task": {}}))[
            "isError"
        ] is False
