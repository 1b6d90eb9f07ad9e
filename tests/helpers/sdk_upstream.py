"""An official SDK (`mcp==2.3.0`) `MCPServer` for the client and proxy tests, in either era.

It answers both eras: `initialize` clients in the handshake era, `server/discover` clients in
2026-07-28. `ask_name` elicits: a round trip in the handshake era (`ctx.elicit`), an input-required
round in 2026-07-28 (the tool returns `InputRequiredResult` until the client answers).

`python -m tests.helpers.sdk_upstream` serves stdio; `serve_http()` serves Streamable HTTP from a thread.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import mcp_types as types
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

sdk = MCPServer("sdk-upstream", instructions="the official SDK server behind the tests")


class Name(BaseModel):
    name: str


@sdk.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@sdk.tool()
async def count(n: int, ctx: Context) -> str:
    """Report progress n times."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"step {i + 1}")
    return f"counted {n}"


@sdk.tool()
async def ask_name(ctx: Context) -> Any:
    """Ask the user for a name and greet them."""
    if ctx.protocol_version == "2026-07-28":
        answers = ctx.input_responses or {}
        answer = answers.get("name")
        if answer is None:
            request = types.ElicitRequest(params=types.ElicitRequestFormParams(
                message="Your name?", requested_schema={"type": "object", "properties": {"name": {"type": "string"}},
                                                        "required": ["name"]}))
            return types.InputRequiredResult(input_requests={"name": request}, request_state="asked")
        content = answer.content if hasattr(answer, "content") else answer.get("content")  # type: ignore[union-attr]
        return f"hello {(content or {}).get('name')}"
    result = await ctx.elicit("Your name?", Name)
    return f"hello {result.data.name}" if result.action == "accept" and result.data else "no name"


@sdk.prompt()
def greet(who: str) -> str:
    """A greeting prompt."""
    return f"Say hello to {who}."


@sdk.resource("sdk://motd")
def motd() -> str:
    """Message of the day."""
    return "the sdk says hi"


@contextlib.contextmanager
def serve_http(*, stateless_http: bool = False, json_response: bool = False) -> Iterator[str]:
    """Serve the SDK server over Streamable HTTP on 127.0.0.1 from a thread; yields its /mcp URL."""
    app = sdk.streamable_http_app(stateless_http=stateless_http, json_response=json_response)
    sock = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    try:
        wait_until_serving(url)
        yield url
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


def wait_until_serving(url: str) -> None:
    """Return once the app at `url` answers (a malformed POST: a quick 4xx in both modes)."""
    httpx.post(url, content=b"{}", timeout=20, headers={"Content-Type": "application/json",
                                                         "Accept": "application/json, text/event-stream"})


if __name__ == "__main__":
    sdk.run()
