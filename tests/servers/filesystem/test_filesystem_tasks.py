"""search_files and directory_tree as tasks (2026-07-28, the tasks extension): created at once,
polled to a result, cancelled on request; and their descriptions say what running as a task means."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_kit.testing import connect
from servers.filesystem.server import build_server

pytestmark = pytest.mark.anyio

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}


def tree(root: Path) -> Path:
    for a in range(5):
        for b in range(5):
            folder = root / f"d{a}" / f"e{b}"
            folder.mkdir(parents=True)
            (folder / f"note{a}{b}.txt").write_text("x")
    return root


async def call(client: Any, method: str, params: dict[str, Any]) -> Any:
    return await client.request(method, {**params, "_meta": META})


async def settle(client: Any, task_id: str) -> dict[str, Any]:
    with anyio.fail_after(20):
        while True:
            task = await call(client, "tasks/get", {"taskId": task_id})
            if task["status"] in ("completed", "failed", "cancelled"):
                return task  # type: ignore[no-any-return]
            await anyio.sleep(0.01)


async def test_search_and_tree_run_as_tasks(tmp_path: Path) -> None:
    root = tree(tmp_path)
    async with connect(build_server([root])) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        for name in ("search_files", "directory_tree"):
            assert tools[name]["execution"] == {"taskSupport": "optional"}
            assert "as a task" in tools[name]["description"] and "cancel" in tools[name]["description"]
        search = await call(client, "tools/call", {"name": "search_files",
                                                   "arguments": {"path": str(root), "pattern": "*.txt"}})
        assert search["resultType"] == "task"
        found = await settle(client, search["taskId"])
        assert len(found["result"]["structuredContent"]["matches"]) == 25
        listing = await call(client, "tools/call", {"name": "directory_tree", "arguments": {"path": str(root)}})
        walked = await settle(client, listing["taskId"])
        assert sorted(entry["name"] for entry in walked["result"]["structuredContent"]["tree"]) == [
            f"d{a}" for a in range(5)]


async def test_a_search_task_can_be_cancelled(tmp_path: Path) -> None:
    root = tree(tmp_path)
    async with connect(build_server([root])) as client:
        search = await call(client, "tools/call", {"name": "search_files",
                                                   "arguments": {"path": str(root), "pattern": "**/*.md"}})
        assert await call(client, "tasks/cancel", {"taskId": search["taskId"]}) == {"resultType": "complete"}
        ended = await settle(client, search["taskId"])
        assert ended["status"] == "cancelled" and "result" not in ended
