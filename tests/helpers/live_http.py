"""A real uvicorn on 127.0.0.1 for HTTP tests: in this process (on a socket bound to port 0 before it starts), or a
server subprocess (`support.http_server`); plus what leak checks count (tasks, sessions, open file descriptors)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import uvicorn

from mcp_kit import MCPServer
from tests.helpers.support import http_server

ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "fault-suite", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
_SSE_LINE = re.compile(r"\r\n|\r|\n")


@dataclass
class LiveServer:
    base: str
    app: MCPServer
    asgi: Any
    server: uvicorn.Server

    @property
    def session_table(self) -> Any:
        return self.asgi.session_table

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])


@contextlib.asynccontextmanager
async def serve(app: MCPServer, **options: Any) -> AsyncIterator[LiveServer]:
    """Serve `app` with uvicorn on 127.0.0.1 (a port the system picks); yields once it answers `/healthz`."""
    limit = options.pop("max_connections", None)
    asgi = app.asgi(host="127.0.0.1", **options)
    config = uvicorn.Config(asgi, host="127.0.0.1", port=0, log_level="warning", lifespan="on",
                            limit_concurrency=limit, timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    sock = config.bind_socket()
    sock.listen(config.backlog)  # connections wait in the backlog until uvicorn serves them
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with sock:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            try:
                async with httpx.AsyncClient(timeout=30) as client:  # answered once the app has started
                    (await client.get(f"{base}/healthz")).raise_for_status()
                yield LiveServer(base, app, asgi, server)
            finally:
                server.should_exit = True  # serve() returns once uvicorn has shut down; the task group waits for it


server_process = http_server  # a server subprocess on 127.0.0.1, port 0: see support.http_server


async def until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Bounded polling of a condition that has no event to wait on (task or fd counts, uvicorn's state)."""
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.01)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def task_count() -> int:
    return len(asyncio.all_tasks())


def sse_messages(text: str) -> list[dict[str, Any]]:
    """The JSON payloads of the `data:` lines of an SSE body (lines end at CR or LF only, as SSE defines them:
    not at the other line breaks `str.splitlines` knows, such as U+0085, which JSON may carry raw)."""
    return [json.loads(line[5:]) for line in _SSE_LINE.split(text) if line.startswith("data:") and line[5:].strip()]


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {**ACCEPT, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers
