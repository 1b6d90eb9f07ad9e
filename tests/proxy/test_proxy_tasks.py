"""Tasks through the proxy: a task-augmented `tools/call` made downstream becomes a task of the upstream, and
`tasks/get`, `tasks/result`, `tasks/update`, `tasks/cancel` and `tasks/list` reach the upstream session that
created it, in both task generations (2026-07-28's extension; 2025-11-25's experimental tasks)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_kit import MCPError, proxy
from mcp_kit.testing import Client, connect
from tests.helpers.support import ROOT

pytestmark = pytest.mark.anyio

UPSTREAM = [sys.executable, "-m", "tests.helpers.kit_tasks_upstream"]
TASKS = "io.modelcontextprotocol/tasks"
DONE = ("completed", "failed", "cancelled")


def meta(*, tasks: bool = True) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"elicitation": {}}
    if tasks:
        capabilities["extensions"] = {TASKS: {}}
    return {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": capabilities}


async def modern(client: Client, method: str, params: dict[str, Any], **options: Any) -> Any:
    return await client.request(method, {**params, "_meta": meta(**options)}, timeout=30)


async def settle(client: Client, task_id: str, statuses: tuple[str, ...] = DONE, *, era: str = "modern") -> Any:
    with anyio.fail_after(20):
        while True:
            if era == "modern":
                task = await modern(client, "tasks/get", {"taskId": task_id})
            else:
                task = await client.request("tasks/get", {"taskId": task_id})
            if task["status"] in statuses:
                return task
            await anyio.sleep(0.02)  # polling, as a task's client does (pollIntervalMs)


@pytest.fixture
async def downstream() -> AsyncIterator[Client]:
    answer = {"action": "accept", "content": {"name": "Ada"}}
    async with connect(proxy(UPSTREAM), elicitation=lambda params: answer) as client:
        yield client


async def test_a_2026_task_runs_upstream_and_is_polled_and_cancelled_through_the_proxy(downstream: Client) -> None:
    discovered = await downstream.request("server/discover", {"_meta": meta()})
    assert discovered["capabilities"]["extensions"] == {TASKS: {}}
    created = await modern(downstream, "tools/call", {"name": "job", "arguments": {"n": 3}})
    assert created["resultType"] == "task" and created["status"] == "working"
    working = await settle(downstream, created["taskId"], ("working",))
    assert working["resultType"] == "complete"
    assert (await modern(downstream, "tools/call", {"name": "open_gate", "arguments": {}}))["content"][0]["text"] == \
        "open"
    done = await settle(downstream, created["taskId"])
    assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "done 3"

    plain = await modern(downstream, "tools/call", {"name": "job", "arguments": {"n": 4}}, tasks=False)
    assert plain["content"][0]["text"] == "done 4"  # not declaring the extension: an ordinary call
    with pytest.raises(MCPError) as unknown:
        await modern(downstream, "tasks/get", {"taskId": "no-such-task"})
    assert unknown.value.code == -32602


async def test_a_2026_task_that_asks_is_answered_with_tasks_update(downstream: Client) -> None:
    created = await modern(downstream, "tools/call", {"name": "ask_first", "arguments": {}})
    asking = await settle(downstream, created["taskId"], ("input_required",))
    (key, question), = asking["inputRequests"].items()
    assert question["method"] == "elicitation/create"
    ack = await modern(downstream, "tasks/update", {"taskId": created["taskId"], "inputResponses": {
        key: {"action": "accept", "content": {"name": "Lin"}}}})
    assert ack == {"resultType": "complete"}
    done = await settle(downstream, created["taskId"])
    assert done["result"]["content"][0]["text"] == "hello Lin"


async def test_a_2026_task_is_cancelled_upstream(downstream: Client) -> None:
    created = await modern(downstream, "tools/call", {"name": "job", "arguments": {"n": 5}})
    assert await modern(downstream, "tasks/cancel", {"taskId": created["taskId"]}) == {"resultType": "complete"}
    cancelled = await settle(downstream, created["taskId"])
    assert cancelled["status"] == "cancelled" and "result" not in cancelled


async def test_a_handshake_era_task_through_the_proxy(downstream: Client) -> None:
    assert "tasks" in downstream.initialize_result["capabilities"]
    created = await downstream.request("tools/call", {"name": "job", "arguments": {"n": 6}, "task": {}})
    task_id = created["task"]["taskId"]
    assert created["task"]["status"] == "working"
    assert task_id in {task["taskId"] for task in (await downstream.request("tasks/list", {}))["tasks"]}
    await downstream.call_tool("open_gate")
    result = await downstream.request("tasks/result", {"taskId": task_id}, timeout=30)
    assert result["content"][0]["text"] == "done 6"
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    status = await downstream.wait_notification("notifications/tasks/status", timeout=20,
                                                where=lambda p: p.get("taskId") == task_id
                                                and p.get("status") == "completed")
    assert status["params"]["taskId"] == task_id

    asking = await downstream.request("tools/call", {"name": "ask_first", "arguments": {}, "task": {}})
    asked = await downstream.request("tasks/result", {"taskId": asking["task"]["taskId"]}, timeout=30)
    assert asked["content"][0]["text"] == "hello Ada"  # its question reached this client through tasks/result


async def test_a_handshake_era_task_is_cancelled_upstream() -> None:
    async with connect(proxy(UPSTREAM)) as client:
        created = await client.request("tools/call", {"name": "job", "arguments": {"n": 7}, "task": {}})
        cancelled = await client.request("tasks/cancel", {"taskId": created["task"]["taskId"]})
        assert cancelled["status"] == "cancelled"
        assert (await settle(client, created["task"]["taskId"], era="handshake"))["status"] == "cancelled"


async def test_task_ids_of_several_servers_are_namespaced(tmp_path: Path) -> None:
    entry = {"command": sys.executable, "args": ["-m", "tests.helpers.kit_tasks_upstream"], "cwd": str(ROOT),
             "env": {"PYTHONPATH": str(ROOT)}}
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"left": entry, "right": entry}}))
    async with connect(proxy(str(path))) as client:
        created = await modern(client, "tools/call", {"name": "right_job", "arguments": {"n": 8}})
        assert created["taskId"].startswith("right+")
        await modern(client, "tools/call", {"name": "right_open_gate", "arguments": {}})
        done = await settle(client, created["taskId"])
        assert done["taskId"] == created["taskId"] and done["result"]["content"][0]["text"] == "done 8"
        with pytest.raises(MCPError) as unknown:
            await modern(client, "tasks/get", {"taskId": "left" + created["taskId"][len("right"):]})
        assert unknown.value.code == -32602  # the other server never made it
        legacy = await client.request("tools/call", {"name": "left_job", "arguments": {"n": 9}, "task": {}})
        task_id = legacy["task"]["taskId"]
        assert task_id.startswith("left+")
        await client.call_tool("left_open_gate")
        result = await client.request("tasks/result", {"taskId": task_id}, timeout=30)
        assert result["content"][0]["text"] == "done 9"
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
        listed = {task["taskId"] for task in (await client.request("tasks/list", {}))["tasks"]}
        assert task_id in listed and all(t.startswith(("left+", "right+")) for t in listed)


async def test_a_client_of_a_version_without_tasks_gets_plain_calls() -> None:
    async with connect(proxy(UPSTREAM), protocol_version="2025-06-18") as client:
        assert "tasks" not in client.initialize_result["capabilities"]
        await client.call_tool("open_gate")
        plain = await client.request("tools/call", {"name": "job", "arguments": {"n": 1}, "task": {}})
        assert plain["content"][0]["text"] == "done 1" and "task" not in plain  # 2025-06-18 has no tasks
        with pytest.raises(MCPError) as missing:
            await client.request("tasks/get", {"taskId": "anything"})
        assert missing.value.code == -32601
