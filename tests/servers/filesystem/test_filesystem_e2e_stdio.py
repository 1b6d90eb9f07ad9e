"""End to end: `python -m servers.filesystem --root DIR` as a real subprocess, driven by the official MCP SDK client."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError as SDKError

from servers.filesystem.uris import file_uri
from tests.helpers.fs_layout import SECRET, Layout

REPO = Path(__file__).resolve().parents[3]
WRITE_TOOLS = {"write_file", "edit_file", "create_directory", "move_file"}
pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]


def server(root: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "servers.filesystem", "--root", str(root), *extra],
                                 cwd=str(REPO))


class Inbox:
    """Server notifications delivered to the SDK's message handler."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        self.items.append(message)
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for_update(self, uri: str, after: int, timeout: float = 20) -> None:
        with anyio.fail_after(timeout):
            while True:
                for item in self.items[after:]:
                    if isinstance(item, types.ResourceUpdatedNotification) and str(item.params.uri) == uri:
                        return
                await self.changed.wait()


def text(result: types.CallToolResult) -> str:
    assert result.is_error is False, result.content
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def error(result: types.CallToolResult) -> str:
    assert result.is_error is True, result.content
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_every_tool_over_stdio(layout: Layout) -> None:
    (layout.root / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(8))
    root = str(layout.root)
    async with stdio_client(server(layout.root)) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.server_info.name == "filesystem"
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert WRITE_TOOLS <= set(tools) and len(tools) == 14
        assert tools["read_text_file"].annotations.read_only_hint is True
        assert tools["write_file"].annotations.destructive_hint is True

        allowed = await session.call_tool("list_allowed_directories", {})
        assert allowed.structured_content == {"directories": [root], "note": None}
        assert text(await session.call_tool("read_text_file", {"path": "ok.txt", "head": 1})) == "hello"
        assert text(await session.call_tool("read_file", {"path": "ok.txt"})) == "hello\nworld\n"
        image = (await session.call_tool("read_media_file", {"path": "pic.png"})).content[0]
        assert isinstance(image, types.ImageContent) and base64.b64decode(image.data).startswith(b"\x89PNG")
        many = text(await session.call_tool("read_multiple_files", {"paths": ["ok.txt", "nope.txt"]}))
        assert "hello" in many and "nope.txt: Error" in many
        assert text(await session.call_tool("write_file", {"path": "notes.md", "content": "# Notes\n- one\n"})) == \
            "Successfully wrote to notes.md"
        diff = text(
            await session.call_tool(
                "edit_file", {"path": "notes.md", "edits": [{"oldText": "- one", "newText": "- two"}]}
            )
        )
        assert "-- one\n+- two" in diff
        assert (layout.root / "notes.md").read_text() == "# Notes\n- two\n"
        text(await session.call_tool("create_directory", {"path": "docs"}))
        text(await session.call_tool("move_file", {"source": "notes.md", "destination": "docs/notes.md"}))
        assert "already exists" in error(
            await session.call_tool("move_file", {"source": "ok.txt", "destination": "docs/notes.md"})
        )
        assert "[DIR] docs" in text(await session.call_tool("list_directory", {"path": root})).splitlines()
        assert "Total:" in text(await session.call_tool("list_directory_with_sizes", {"path": root, "sortBy": "size"}))
        tree = await session.call_tool("directory_tree", {"path": root, "excludePatterns": ["sub"]})
        assert {
            "name": "docs",
            "type": "directory",
            "children": [{"name": "notes.md", "type": "file", "children": None, "symlink": None, "truncated": None}],
            "symlink": None,
            "truncated": None,
        } in tree.structured_content["tree"]
        found = await session.call_tool("search_files", {"path": root, "pattern": "**/*.md"})
        assert found.structured_content["matches"] == [str(layout.root / "docs" / "notes.md")]
        info = await session.call_tool("get_file_info", {"path": "docs/notes.md"})
        assert info.structured_content["isFile"] is True and info.structured_content["size"] == 14
        denied = error(await session.call_tool("read_text_file", {"path": str(layout.root / "link_out")}))
        assert "Access denied" in denied and SECRET not in denied


async def test_read_only_mode_over_stdio(layout: Layout) -> None:
    async with stdio_client(server(layout.root, "--read-only")) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert names and not names & WRITE_TOOLS
        with pytest.raises(SDKError, match="Unknown tool"):
            await session.call_tool("write_file", {"path": "x.txt", "content": "x"})
        assert text(await session.call_tool("read_text_file", {"path": "ok.txt"})) == "hello\nworld\n"
    assert not (layout.root / "x.txt").exists()


async def test_audit_log_over_stdio(layout: Layout, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    async with stdio_client(server(layout.root, "--audit-log", str(log))) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("write_file", {"path": "a.txt", "content": "A"})
        await session.call_tool("read_text_file", {"path": "/etc/shadow"})
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["tool"], r["outcome"]) for r in records] == [("write_file", "ok"), ("read_text_file", "error")]
    assert records[0]["arguments"] == {"path": "a.txt", "content": "A"}
    assert "Access denied" in records[1]["error"] and records[1]["duration_ms"] >= 0


async def test_subscription_sees_another_process_change_the_file(layout: Layout) -> None:
    target = layout.root / "watched.txt"
    target.write_text("v1")
    uri = file_uri(target)
    inbox = Inbox()
    async with stdio_client(server(layout.root)) as (read, write), \
            ClientSession(read, write, message_handler=inbox) as session:
        await session.initialize()
        contents = (await session.read_resource(uri)).contents
        assert contents[0].text == "v1"
        await session.subscribe_resource(uri)  # answered once the path is registered: no change after it is missed
        for change in (lambda: target.write_text("v2"), target.unlink, lambda: target.write_text("v3")):
            seen = len(inbox.items)
            change()
            await inbox.wait_for_update(uri, seen)
        await session.unsubscribe_resource(uri)


async def test_roots_from_the_client_narrow_access(layout: Layout) -> None:
    offered = [types.Root(uri=file_uri(layout.root / "sub"), name="sub")]

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=offered)

    async with stdio_client(server(layout.root)) as (read, write), \
            ClientSession(read, write, list_roots_callback=list_roots) as session:
        await session.initialize()
        allowed = await session.call_tool("list_allowed_directories", {})
        assert allowed.structured_content["directories"] == [str(layout.root / "sub")]
        assert text(await session.call_tool("read_text_file", {"path": "inner.txt"})) == "inner\n"
        assert "Access denied" in error(
            await session.call_tool("read_text_file", {"path": str(layout.root / "ok.txt")})
        )
        offered[:] = [types.Root(uri=file_uri(layout.root))]
        await session.send_roots_list_changed()
        with anyio.fail_after(10):
            while True:
                allowed = await session.call_tool("list_allowed_directories", {})
                if allowed.structured_content["directories"] == [str(layout.root)]:
                    break
                await anyio.sleep(0.05)
        assert (
            text(await session.call_tool("read_text_file", {"path": str(layout.root / "ok.txt")})) == "hello\nworld\n"
        )


async def test_confirm_writes_with_sdk_elicitation(layout: Layout) -> None:
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async with stdio_client(server(layout.root, "--confirm-writes")) as (read, write), \
            ClientSession(read, write, elicitation_callback=elicit) as session:
        await session.initialize()
        text(await session.call_tool("write_file", {"path": "ok.txt", "content": "confirmed"}))
    assert (layout.root / "ok.txt").read_text() == "confirmed"
    assert len(asked) == 1 and "Overwrite" in asked[0]
