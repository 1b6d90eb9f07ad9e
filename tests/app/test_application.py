"""Server-wide features: logging/setLevel, pagination, list_changed at run time, the audit trail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_kit import Context, MCPError, MCPServer, ToolCallRecord, ToolError
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio


# ---------------------------------------------------------------------------- logging


def logging_app() -> MCPServer:
    app = MCPServer("logs")

    @app.tool
    async def chatter(ctx: Context) -> str:
        await ctx.debug("d")
        await ctx.info("i", logger="app")
        await ctx.log("notice", {"n": 1})
        await ctx.warning("w")
        await ctx.error("e")
        await ctx.log("critical", "c")
        return "done"

    return app


def levels(client: Any, start: int = 0) -> list[str]:
    return [n["params"]["level"] for n in client.notifications[start:] if n["method"] == "notifications/message"]


async def test_set_level_filters_log_notifications() -> None:
    async with connect(logging_app()) as client:
        await client.set_level("warning")
        await client.call_tool("chatter")
        assert levels(client) == ["warning", "error", "critical"]
        mark = len(client.notifications)
        await client.set_level("debug")
        await client.call_tool("chatter")
        assert levels(client, mark) == ["debug", "info", "notice", "warning", "error", "critical"]
        info = next(n for n in client.notifications[mark:] if n["params"].get("level") == "info")
        assert info["params"] == {"level": "info", "data": "i", "logger": "app"}


async def test_log_level_is_per_session() -> None:
    app = logging_app()
    async with connect(app) as quiet, connect(app) as loud:
        await quiet.set_level("error")
        await loud.set_level("debug")
        await quiet.call_tool("chatter")
        assert levels(quiet) == ["error", "critical"]
        assert levels(loud) == []


@pytest.mark.parametrize("level", ["verbose", "WARNING", None, 3])
async def test_invalid_level_is_invalid_params(level: Any) -> None:
    async with connect(logging_app()) as client:
        with pytest.raises(MCPError) as error:
            await client.request("logging/setLevel", {"level": level})
        assert error.value.code == -32602 and "level" in error.value.message


# ---------------------------------------------------------------------------- pagination


def paged_app() -> MCPServer:
    app = MCPServer("paged", page_size=2)
    for i in range(5):
        def tool(x: int = i) -> int:
            return x
        app.add_tool(tool, name=f"tool{i}")

        def fixed(i: int = i) -> str:
            return str(i)
        app.resource(f"fixed://{i}", name=f"fixed{i}")(fixed)

        def templ(v: str) -> str:
            return v
        app.resource(f"templ{i}://{{v}}", name=f"templ{i}")(templ)

        def prompt() -> str:
            return "p"
        app.prompt(prompt, name=f"prompt{i}")
    return app


@pytest.mark.parametrize(("method", "key", "prefix"), [
    ("tools/list", "tools", "tool"),
    ("resources/list", "resources", "fixed"),
    ("resources/templates/list", "resourceTemplates", "templ"),
    ("prompts/list", "prompts", "prompt"),
])
async def test_cursor_pagination_on_every_list_method(method: str, key: str, prefix: str) -> None:
    async with connect(paged_app()) as client:
        pages: list[list[str]] = []
        params: dict[str, Any] = {}
        for _ in range(10):
            page = await client.request(method, params)
            pages.append([item["name"] for item in page[key]])
            if "nextCursor" not in page:
                break
            assert isinstance(page["nextCursor"], str)
            params = {"cursor": page["nextCursor"]}
        assert pages == [[f"{prefix}0", f"{prefix}1"], [f"{prefix}2", f"{prefix}3"], [f"{prefix}4"]]


@pytest.mark.parametrize("method", ["tools/list", "resources/list", "resources/templates/list", "prompts/list"])
@pytest.mark.parametrize("cursor", ["not-a-cursor!", "OTk5", "", 12])
async def test_invalid_cursor_is_invalid_params(method: str, cursor: Any) -> None:
    async with connect(paged_app()) as client:
        with pytest.raises(MCPError) as error:
            await client.request(method, {"cursor": cursor})
        assert error.value.code == -32602 and "cursor" in error.value.message.lower()


async def test_no_next_cursor_when_everything_fits() -> None:
    app = MCPServer("small", page_size=5)
    for i in range(5):
        app.add_tool(lambda: "x", name=f"t{i}")
    async with connect(app) as client:
        page = await client.request("tools/list")
        assert len(page["tools"]) == 5 and "nextCursor" not in page


# ---------------------------------------------------------------------------- list_changed


async def test_list_changed_notifications_at_run_time() -> None:
    app = MCPServer("dynamic")

    @app.tool
    def first() -> str:
        return "1"

    async with connect(app) as client:
        assert [t["name"] for t in await client.list_tools()] == ["first"]

        app.add_tool(lambda: "2", name="second")
        await client.wait_notification("notifications/tools/list_changed")
        assert [t["name"] for t in await client.list_tools()] == ["first", "second"]

        mark = len(client.notifications)
        app.remove_tool("first")
        await client.wait_notification("notifications/tools/list_changed", after=mark)
        assert [t["name"] for t in await client.list_tools()] == ["second"]

        mark = len(client.notifications)
        app.resource("late://r")(lambda: "r")
        await client.wait_notification("notifications/resources/list_changed", after=mark)
        assert [r["uri"] for r in await client.list_resources()] == ["late://r"]
        mark = len(client.notifications)
        app.remove_resource("late://r")
        await client.wait_notification("notifications/resources/list_changed", after=mark)

        mark = len(client.notifications)
        app.prompt(lambda: "hi", name="late")
        await client.wait_notification("notifications/prompts/list_changed", after=mark)
        assert [p["name"] for p in await client.list_prompts()] == ["late"]
        mark = len(client.notifications)
        app.remove_prompt("late")
        await client.wait_notification("notifications/prompts/list_changed", after=mark)
        assert await client.list_prompts() == []


async def test_removing_something_unknown_sends_nothing() -> None:
    app = MCPServer("quiet")
    app.add_tool(lambda: "x", name="x")
    async with connect(app) as client:
        app.remove_tool("nope")
        app.remove_prompt("nope")
        app.remove_resource("nope://x")
        await client.request("ping")
        assert not [n for n in client.notifications if n["method"].endswith("list_changed")]


async def test_no_list_changed_before_the_client_is_initialized() -> None:
    app = MCPServer("early")
    async with connect(app, initialize=False) as client:
        app.add_tool(lambda: "x", name="x")
        await client.request("ping")
        assert client.notifications == []


# ---------------------------------------------------------------------------- audit trail


def audited_app() -> MCPServer:
    app = MCPServer("audited")

    @app.tool
    def add(a: int, b: int) -> int:
        return a + b

    @app.tool
    def deny(reason: str) -> str:
        raise ToolError(f"denied: {reason}")

    return app


async def test_tool_call_hook_records_tool_arguments_outcome_and_duration() -> None:
    app = audited_app()
    records: list[ToolCallRecord] = []
    app.add_audit_hook(records.append)
    async with connect(app) as client:
        await client.call_tool("add", {"a": 1, "b": 2})
        await client.call_tool("deny", {"reason": "nope"})
        await client.call_tool("add", {"a": "x"})
        session_id = client.session.session_id
    ok, refused, invalid = records
    assert (ok.tool, ok.arguments, ok.outcome, ok.is_error, ok.error) == ("add", {"a": 1, "b": 2}, "ok", False, None)
    assert (refused.tool, refused.outcome, refused.error) == ("deny", "error", "denied: nope")
    assert invalid.outcome == "error" and "'a'" in (invalid.error or "")
    assert all(r.duration_ms >= 0 and r.session == session_id and r.time for r in records)


async def test_a_failing_hook_does_not_break_the_call() -> None:
    app = audited_app()

    def broken(record: ToolCallRecord) -> None:
        raise RuntimeError("hook bug")

    app.add_audit_hook(broken)
    async with connect(app) as client:
        result = await client.call_tool("add", {"a": 2, "b": 2})
        assert result["isError"] is False and result["content"][0]["text"] == "4"


async def test_audit_log_writes_one_json_line_per_call(tmp_path: Path) -> None:
    app = audited_app()
    path = tmp_path / "audit.jsonl"
    app.enable_audit_log(str(path))
    async with connect(app) as client:
        await client.call_tool("add", {"a": 1, "b": 1})
        await client.call_tool("deny", {"reason": "x" * 5000})
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2
    first, second = lines
    assert {"time", "tool", "arguments", "outcome", "is_error", "error", "duration_ms", "session"} <= set(first)
    assert first["tool"] == "add" and first["arguments"] == {"a": 1, "b": 1} and first["outcome"] == "ok"
    assert second["outcome"] == "error" and second["is_error"] is True
    assert len(second["arguments"]["reason"]) < 5000  # long arguments are truncated
    assert isinstance(first["duration_ms"], (int, float))
