"""`/mcp` served from a `LeanRequest` answers byte for byte what it answered from a Starlette `Request`.

The same requests go, in the same order, to two fresh apps in process: one as it is, one whose
endpoint is handed a Starlette `Request` (the path before the lean one). Every ASGI message each sends
back (status, headers, body chunks) must be equal, session ids aside (each app draws its own).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from starlette.requests import Request as StarletteRequest

from mcp_kit import MCPServer
from mcp_kit._transports import http as http_module
from mcp_kit._transports.http_common import LeanRequest, decoded_headers

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
JSON_TYPE = [(b"content-type", b"application/json")]
BOTH = [(b"accept", b"application/json, text/event-stream")]
HOST = [(b"host", b"127.0.0.1:8000")]
SESSION = b"<session>"


def build() -> MCPServer:
    app = MCPServer("lean")

    @app.tool
    async def echo(text: str) -> str:
        """Echo."""
        return text

    @app.tool
    async def boom() -> str:
        """Fails."""
        raise ValueError("no")

    return app


@asynccontextmanager
async def running(asgi: Any) -> AsyncIterator[None]:
    """The app's lifespan, driven through the ASGI lifespan protocol."""
    to_app = anyio.create_memory_object_stream[dict[str, Any]](4)
    from_app = anyio.create_memory_object_stream[dict[str, Any]](4)
    async with to_app[0], to_app[1], from_app[0], from_app[1], anyio.create_task_group() as tg:
        tg.start_soon(asgi, {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, to_app[1].receive,
                      from_app[0].send)
        await to_app[0].send({"type": "lifespan.startup"})
        assert (await from_app[1].receive())["type"] == "lifespan.startup.complete"
        try:
            yield
        finally:
            await to_app[0].send({"type": "lifespan.shutdown"})
            assert (await from_app[1].receive())["type"] == "lifespan.shutdown.complete"


async def exchange(asgi: Any, method: str, headers: list[tuple[bytes, bytes]], body: bytes = b"",
                   chunks: int = 1) -> list[dict[str, Any]]:
    """One HTTP exchange: the ASGI messages the app sent (the body arriving in `chunks` messages)."""
    parts = [body[i * len(body) // chunks:(i + 1) * len(body) // chunks] for i in range(chunks)]
    if body:
        headers = headers + [(b"content-length", str(len(body)).encode())]
    incoming = [{"type": "http.request", "body": part, "more_body": i < chunks - 1} for i, part in enumerate(parts)]
    done = anyio.Event()
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop(0)
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            done.set()

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": "/mcp", "raw_path": b"/mcp", "query_string": b"", "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000), "state": {}}
    with anyio.fail_after(10):
        await asgi(scope, receive, send)
    return sent


def script(session: bytes) -> list[tuple[str, list[tuple[bytes, bytes]], bytes, int]]:
    """The requests, given the session id the app handed out."""
    in_session = HOST + JSON_TYPE + BOTH + [(b"mcp-session-id", session), (b"mcp-protocol-version", b"2025-11-25")]

    def rpc(request_id: int, method: str, **params: Any) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()

    return [
        ("POST", in_session, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(), 1),
        ("POST", in_session, rpc(2, "tools/call", name="echo", arguments={"text": "hello"}), 1),
        ("POST", in_session, rpc(3, "tools/call", name="echo", arguments={"text": "in parts"}), 3),
        ("POST", in_session, rpc(4, "tools/list"), 1),
        ("POST", in_session, rpc(5, "tools/call", name="boom", arguments={}), 1),
        ("POST", in_session, rpc(6, "no/such/method"), 1),
        ("POST", in_session, b"[" + rpc(7, "ping") + b"," + rpc(8, "ping") + b"]", 1),
        ("POST", in_session, b"{not json", 1),
        ("POST", HOST + [(b"content-type", b"text/plain")] + BOTH + [(b"mcp-session-id", session)], rpc(9, "ping"), 1),
        ("POST", HOST + JSON_TYPE + [(b"accept", b"text/html"), (b"mcp-session-id", session)], rpc(10, "ping"), 1),
        ("POST", HOST + JSON_TYPE + [(b"accept", b"application/json"), (b"mcp-session-id", session)],
         rpc(11, "tools/call", name="echo", arguments={"text": "json"}), 1),
        ("POST", in_session + [(b"mcp-session-id", b"second-value-is-ignored")], rpc(12, "ping"), 1),
        ("POST", HOST + JSON_TYPE + BOTH, rpc(13, "ping"), 1),  # no session
        ("POST", HOST + JSON_TYPE + BOTH + [(b"mcp-session-id", b"unknown")], rpc(14, "ping"), 1),
        ("POST", in_session[:-1] + [(b"mcp-protocol-version", b"1999-01-01")], rpc(15, "ping"), 1),
        ("POST", HOST + JSON_TYPE + BOTH + [(b"origin", b"http://evil.example")], rpc(16, "ping"), 1),
        ("POST", [(b"host", b"evil.example")] + JSON_TYPE + BOTH, rpc(17, "ping"), 1),
        ("POST", HOST + JSON_TYPE + BOTH + [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"),
                                            (b"mcp-name", b"echo")],
         json.dumps({"jsonrpc": "2.0", "id": 18, "method": "tools/call", "params": {
             "name": "echo", "arguments": {"text": "stateless"},
             "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": {}}}}).encode(), 1),
        ("POST", HOST + JSON_TYPE + BOTH + [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/list")],
         rpc(19, "tools/call", name="echo"), 1),  # headers that disagree with the body
        ("PUT", in_session, b"", 1),
        ("DELETE", HOST + [(b"mcp-session-id", session)], b"", 1),
        ("POST", in_session, rpc(20, "ping"), 1),  # after DELETE
    ]


async def serve_script(app: MCPServer) -> list[list[dict[str, Any]]]:
    asgi = app.asgi(host="127.0.0.1", port=8000, max_body=4096)
    replies: list[list[dict[str, Any]]] = []
    async with running(asgi):
        opened = await exchange(asgi, "POST", HOST + JSON_TYPE + BOTH, json.dumps(INIT).encode())
        session = dict(opened[0]["headers"])[b"mcp-session-id"]
        replies.append(opened)
        for method, headers, body, chunks in script(session):
            replies.append(await exchange(asgi, method, headers, body, chunks))
        replies.append(await exchange(asgi, "POST", HOST + JSON_TYPE + BOTH, b"x" * 5000))  # over max_body
    return [[_without(message, session) for message in reply] for reply in replies]


def _without(message: dict[str, Any], session: bytes) -> dict[str, Any]:
    """The message with this app's session id and the error ids it drew replaced by placeholders."""
    out = dict(message)
    if "headers" in out:
        out["headers"] = [(k, SESSION if v == session else v) for k, v in out["headers"]]
    if "body" in out:
        out["body"] = re.sub(rb"error id [0-9a-f]{12}", b"error id <id>", bytes(out["body"]).replace(session, SESSION))
    return out


@pytest.mark.anyio
async def test_the_lean_path_answers_byte_for_byte_what_the_starlette_request_path_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lean = await serve_script(build())
    monkeypatch.setattr(http_module, "LeanRequest", lambda scope, receive, headers: StarletteRequest(scope, receive))
    before = await serve_script(build())
    assert len(lean) == len(before)
    for index, (mine, theirs) in enumerate(zip(lean, before, strict=True)):
        assert mine == theirs, f"exchange {index} differs"
    statuses = [reply[0]["status"] for reply in lean]
    assert {200, 202, 400, 403, 404, 405, 406, 413, 415} <= set(statuses)  # the script reaches every refusal


def test_headers_read_the_first_value_of_a_repeated_name_as_starlette_does() -> None:
    raw = [(b"host", b"a"), (b"x-one", b"1"), (b"mcp-session-id", b"first"), (b"mcp-session-id", b"second")]
    scope = {"type": "http", "method": "POST", "headers": raw}
    starlette = StarletteRequest(scope)
    lean = LeanRequest(scope, None)
    for name in ("host", "x-one", "mcp-session-id", "missing"):
        assert lean.headers.get(name) == starlette.headers.get(name)
    assert decoded_headers(raw)["mcp-session-id"] == "first"


@pytest.mark.anyio
async def test_a_body_in_several_messages_is_read_whole_and_a_disconnect_raises_as_starlette_does() -> None:
    from starlette.requests import ClientDisconnect

    def receiver(messages: list[dict[str, Any]]) -> Any:
        async def receive() -> dict[str, Any]:
            return messages.pop(0)
        return receive

    scope = {"type": "http", "method": "POST", "headers": []}
    parts = [{"type": "http.request", "body": b"ab", "more_body": True}, {"type": "http.request", "body": b"c"}]
    lean = LeanRequest(scope, receiver(list(parts)))
    assert await lean.body() == b"abc" == await StarletteRequest(scope, receiver(list(parts))).body()
    assert await lean.body() == b"abc"  # read once
    gone = [{"type": "http.request", "body": b"ab", "more_body": True}, {"type": "http.disconnect"}]
    with pytest.raises(ClientDisconnect):
        await LeanRequest(scope, receiver(list(gone))).body()
