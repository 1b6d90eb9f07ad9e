"""2026-07-28 over HTTP: closing a request's response stream cancels the work behind it."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest

from mcp_kit import Context, MCPServer
from tests.helpers.live_http import serve

pytestmark = pytest.mark.anyio

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
    "progressToken": "p1",
}


async def test_closing_the_stream_cancels_the_request() -> None:
    app = MCPServer("cancel")
    started, cancelled = anyio.Event(), anyio.Event()

    @app.tool
    async def long_job(ctx: Context) -> str:
        """Works for a minute unless cancelled."""
        await ctx.report_progress(1, 100)
        started.set()
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return "done"

    async with serve(app) as live:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"_meta": META, "name": "long_job", "arguments": {}}}
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
                   "Mcp-Method": "tools/call", "Mcp-Name": "long_job"}
        with anyio.fail_after(20):
            async with httpx.AsyncClient() as client:
                async with client.stream("POST", live.url, json=body, headers=headers) as reply:
                    assert reply.headers["content-type"].startswith("text/event-stream")
                    async for line in reply.aiter_lines():
                        if line.startswith("data:"):
                            assert json.loads(line[5:])["method"] == "notifications/progress"
                            break
                    await started.wait()
                # the stream is closed here, with the tool still running
            await cancelled.wait()
