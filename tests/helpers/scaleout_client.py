"""Raw HTTP helpers for the scale-out tests: JSON-RPC over Streamable HTTP (both eras) and SSE parsing,
and a round-robin transport that spreads one client's requests over several server processes."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.helpers.support import ROOT, ServerURL, http_server

SERVER = [str(ROOT / "tests" / "fixtures" / "scaleout_server.py")]
HEAD = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
VERSION = "2025-11-25"
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


@contextmanager
def servers(redis_url: str, count: int = 3, extra_env: dict[str, str] | None = None) -> Iterator[list[ServerURL]]:
    """`count` scale-out servers on their own ports sharing the Redis at `redis_url`."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(http_server(SERVER, env={"MCP_BACKEND": redis_url, **(extra_env or {})}))
               for _ in range(count)]


def sse_messages(text: str) -> list[tuple[str | None, dict[str, Any]]]:
    """(id, JSON message) for each data event of an SSE body."""
    found: list[tuple[str | None, dict[str, Any]]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event_id, data = None, []
        for line in block.splitlines():
            if line.startswith("id:"):
                event_id = line[3:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data and "".join(data):
            found.append((event_id, json.loads("".join(data))))
    return found


def last_id(text: str) -> str | None:
    ids = [line[3:].strip() for line in text.replace("\r\n", "\n").splitlines() if line.startswith("id:")]
    return ids[-1] if ids else None


def answer_of(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer in a POST response (JSON or SSE)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        answers = [m for _, m in sse_messages(response.text) if "result" in m or "error" in m]
        assert answers, response.text
        return answers[-1]
    return response.json()


class Session:
    """A raw handshake-era session whose requests go to whichever base URL each call names."""

    def __init__(self, client: httpx.Client, capabilities: dict[str, Any] | None = None) -> None:
        self.client = client
        self.capabilities = capabilities or {}
        self.id: str | None = None
        self._ids = itertools.count(1)

    def headers(self) -> dict[str, str]:
        headers = {**HEAD, "MCP-Protocol-Version": VERSION}
        if self.id:
            headers["Mcp-Session-Id"] = self.id
        return headers

    def open(self, base: str) -> dict[str, Any]:
        response = self.client.post(f"{base}/mcp", headers={**HEAD}, json={
            "jsonrpc": "2.0", "id": next(self._ids), "method": "initialize",
            "params": {"protocolVersion": VERSION, "capabilities": self.capabilities,
                       "clientInfo": {"name": "raw", "version": "1"}}})
        assert response.status_code == 200, response.text
        self.id = response.headers["mcp-session-id"]
        return answer_of(response)

    def notify(self, base: str, method: str, params: dict[str, Any] | None = None) -> httpx.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        return self.client.post(f"{base}/mcp", headers=self.headers(), json=body)

    def post(self, base: str, method: str, params: dict[str, Any] | None = None) -> httpx.Response:
        return self.client.post(f"{base}/mcp", headers=self.headers(), json={
            "jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params or {}})

    def call(self, base: str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self.post(base, method, params)
        assert response.status_code == 200, (response.status_code, response.text)
        return answer_of(response)

    def tool(self, base: str, name: str, arguments: dict[str, Any] | None = None) -> str:
        answer = self.call(base, "tools/call", {"name": name, "arguments": arguments or {}})
        assert "result" in answer, answer
        return str(answer["result"]["content"][0]["text"])


class RoundRobin(httpx.AsyncBaseTransport):
    """Sends each request to the next of `ports` (a load balancer without sticky sessions).

    `pin` maps a path (e.g. "/sse") to the one port that serves it.
    """

    def __init__(self, ports: list[int], pin: dict[str, int] | None = None, transport: Any = None) -> None:
        self.ports = ports
        self.pin = pin or {}
        self.inner = transport if transport is not None else httpx.AsyncHTTPTransport()
        self.turn = itertools.count()
        self.sent: list[tuple[str, str, int]] = []

    async def handle_async_request(self, request: Any) -> Any:
        port = self.pin.get(request.url.path)
        if port is None:
            port = self.ports[next(self.turn) % len(self.ports)]
        request.url = request.url.copy_with(port=port)
        self.sent.append((request.method, request.url.path, port))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


async def sse_lines(response: Any) -> AsyncIterator[tuple[str | None, dict[str, Any]]]:
    """(id, message) for each data event of a streaming SSE response, as they arrive."""
    event_id: str | None = None
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line:
            if data and "".join(data):
                yield event_id, json.loads("".join(data))
            event_id, data = None, []

