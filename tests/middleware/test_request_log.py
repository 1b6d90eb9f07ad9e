"""`RequestLog`: one JSON line per request, arguments only where a tool opts in (or redacted)."""

from __future__ import annotations

import io
import json

import pytest

from mcp_kit import MCPError, MCPServer
from mcp_kit.middleware import MaskErrors, RequestLog
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio


async def test_one_line_per_request_with_timing_outcome_and_redacted_arguments() -> None:
    stream = io.StringIO()
    log = RequestLog(stream, arguments={"search": True, "login": lambda args: {"user": args.get("user")}})
    app = MCPServer("logged", middleware=[log, MaskErrors()])

    @app.tool
    def search(q: str) -> str:
        return q

    @app.tool
    def login(user: str, password: str) -> str:
        return "ok"

    @app.tool
    def secret(token: str) -> str:
        raise RuntimeError("boom")

    async with connect(app) as client:
        await client.call_tool("search", {"q": "shoes"})
        await client.call_tool("login", {"user": "ada", "password": "hunter2"})
        await client.call_tool("secret", {"token": "t0ps3cret"})
        with pytest.raises(MCPError):
            await client.read_resource("nothing://here")
        session = client.session.session_id
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [line["method"] for line in lines] == ["initialize", "tools/call", "tools/call", "tools/call",
                                                  "resources/read"]
    search_line, login_line, secret_line, read_line = lines[1:]
    assert search_line["tool"] == "search" and search_line["arguments"] == {"q": "shoes"}
    assert search_line["outcome"] == "ok" and search_line["session"] == session and search_line["subject"] is None
    assert isinstance(search_line["duration_ms"], float)
    assert login_line["arguments"] == {"user": "ada"} and "hunter2" not in json.dumps(lines)
    assert "arguments" not in secret_line and "t0ps3cret" not in json.dumps(lines)
    assert secret_line["outcome"] == "tool_error" and len(secret_line["error_id"]) == 12
    assert read_line["uri"] == "nothing://here" and read_line["outcome"] == "error" and read_line["code"] == -32002
