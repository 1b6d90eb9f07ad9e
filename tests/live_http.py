"""A real uvicorn on 127.0.0.1 for HTTP tests: in this process (port 0), or a server subprocess whose port is
read from its startup log; plus what leak checks count (tasks, sessions, open file descriptors)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn

from mcp_kit import MCPServer

from .support import ROOT, stop

ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "fault-suite", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
_SSE_LINE = re.compile(r"\r\n|\r|\n")
_LISTENING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


@dataclass
class LiveServer:
    base: str
    app: MCPServer
    asgi: Any
    server: uvicorn.Server

    @property
    def transport(self) -> Any:
        return self.asgi.transport

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])


@contextlib.asynccontextmanager
async def serve(app: MCPServer, **options: Any) -> AsyncIterator[LiveServer]:
    """Serve `app` with uvicorn on 127.0.0.1, port 0; yields once it accepts connections."""
    limit = options.pop("max_connections", None)
    asgi = app.asgi(host="127.0.0.1", **options)
    config = uvicorn.Config(asgi, host="127.0.0.1", port=0, log_level="warning", lifespan="on",
                            limit_concurrency=limit, timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        await until(lambda: server.started and bool(server.servers), "uvicorn to start")
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            yield LiveServer(f"http://127.0.0.1:{port}", app, asgi, server)
        finally:
            server.should_exit = True  # serve() returns once uvicorn has shut down; the task group waits for it


@contextlib.contextmanager
def server_process(args: list[str], timeout: float = 20.0) -> Iterator[str]:
    """Run `python ARGS --transport http --port 0` and yield its base URL once uvicorn says where it listens."""
    command = [sys.executable, *args, "--transport", "http", "--host", "127.0.0.1", "--port", "0", "--log-level", "info"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:  # keeps draining stderr so the server never blocks on a full pipe
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        seen: list[str] = []
        while True:
            line = lines.get(timeout=timeout)
            if line is None:
                raise RuntimeError("server exited before listening:\n" + "".join(seen)[-2000:])
            seen.append(line)
            found = _LISTENING.search(line)
            if found:
                break
        yield f"http://127.0.0.1:{found.group(1)}"
    finally:
        stop(process)


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
