"""`MaskErrors`: nothing of an unexpected exception reaches the client; the id is in the log and the audit record."""

from __future__ import annotations

import logging

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcp_kit import AuditRecord, MCPError, MCPServer, ToolError, UpstreamUnavailable
from mcp_kit.middleware import MaskErrors
from mcp_kit.middleware._masking import error_id_in
from mcp_kit.testing import connect
from tests.helpers.live_http import serve

pytestmark = pytest.mark.anyio
SECRET = "postgres://admin:hunter2@db"


def build(**options: object) -> MCPServer:
    app = MCPServer("masked", **options)  # type: ignore[arg-type]

    @app.tool
    def leak() -> str:
        raise KeyError(SECRET)

    @app.tool
    def refuse() -> str:
        raise ToolError("no such city: try another")

    @app.tool
    def upstream() -> str:
        raise UpstreamUnavailable("the weather service is down; retry in a minute", source="weather")

    @app.resource("secret://conf")
    def conf() -> str:
        raise RuntimeError(SECRET)

    @app.prompt
    def broken() -> str:
        raise ValueError(SECRET)

    return app


async def test_in_memory_a_crash_becomes_an_error_id_in_the_answer_the_log_and_the_audit(
        caplog: pytest.LogCaptureFixture) -> None:
    app = build(middleware=[MaskErrors()])
    audit: list[AuditRecord] = []
    app.add_audit_hook(audit.append)
    with caplog.at_level(logging.ERROR, logger="mcp_kit.errors"):
        async with connect(app) as client:
            result = await client.call_tool("leak", {})
            refused = await client.call_tool("refuse", {})
            down = await client.call_tool("upstream", {})
            with pytest.raises(MCPError) as read:
                await client.read_resource("secret://conf")
            with pytest.raises(MCPError) as prompt:
                await client.get_prompt("broken", {})
    text = result["content"][0]["text"]
    assert result["isError"] is True and SECRET not in text and "KeyError" not in text
    error_id = error_id_in(text)
    assert error_id and text.startswith(f"Tool 'leak' failed (error id {error_id})")
    assert refused["content"][0]["text"] == "no such city: try another"  # ToolError passes
    assert down["content"][0]["text"] == "the weather service is down; retry in a minute"  # so does upstream
    for raised in (read.value, prompt.value):
        assert raised.code == -32603 and SECRET not in raised.message and error_id_in(raised.message)
    logged = [r for r in caplog.records if error_id in r.getMessage()]
    assert logged and logged[0].exc_info is not None and SECRET in str(logged[0].exc_info[1])
    assert audit[0].tool == "leak" and error_id in (audit[0].error or "")
    assert error_id_in(audit[-1].error or "") == error_id_in(read.value.message)  # the read's record too


async def test_off_by_default_in_memory_and_over_stdio() -> None:
    async with connect(build()) as client:
        result = await client.call_tool("leak", {})
    assert SECRET in result["content"][0]["text"]


async def test_over_http_with_the_sdk_client_nothing_of_the_exception_reaches_it() -> None:
    async with serve(build()) as live, streamable_http_client(live.url) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("leak", {})
        text = result.content[0].text  # type: ignore[union-attr]
        assert result.is_error is True and SECRET not in text and "KeyError" not in text and error_id_in(text)
        with pytest.raises(Exception) as read:
            await session.read_resource("secret://conf")  # type: ignore[arg-type]
        assert SECRET not in str(read.value) and "RuntimeError" not in str(read.value)


async def test_mask_errors_false_keeps_http_answers_unmasked() -> None:
    async with serve(build(mask_errors=False)) as live, streamable_http_client(live.url) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("leak", {})
        assert SECRET in result.content[0].text  # type: ignore[union-attr]
