"""An in-memory MCP client for testing servers without processes or sockets.

    async with connect(app) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert result["structuredContent"] == {"result": 3}

Messages cross as real JSON, so what passes here passes on the wire. Results are the wire
JSON (dicts); errors raise `MCPError` with the JSON-RPC code.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio

from .errors import MCPError
from .jsonrpc import (
    METHOD_NOT_FOUND,
    Batch,
    ErrorResponse,
    InvalidMessage,
    Notification,
    Request,
    Response,
    decode_message,
    encode_message,
)
from .server import MCPServer
from .session import Session
from .transports.memory import MemoryWriter, memory_pipe
from .versions import LATEST_HANDSHAKE

ClientHandler = Callable[[dict[str, Any]], Any]


class Client:
    """A minimal MCP client bound to one in-memory session."""

    def __init__(self, session: Session, handlers: dict[str, ClientHandler]) -> None:
        self.session = session
        self.handlers = handlers
        self.notifications: list[dict[str, Any]] = []
        self.initialize_result: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._waiting: dict[Any, tuple[anyio.Event, list[Any]]] = {}
        self._notified = anyio.Event()

    # ------------------------------------------------------------------ plumbing

    async def _send(self, message: Request | Notification | Response | ErrorResponse) -> None:
        await self.session.dispatcher.feed(decode_message(encode_message(message)))

    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 30) -> Any:
        """Send a request; return its result or raise MCPError."""
        request_id = next(self._ids)
        event, box = anyio.Event(), []
        self._waiting[request_id] = (event, box)
        try:
            await self._send(Request(request_id, method, params))
            with anyio.fail_after(timeout):
                await event.wait()
        finally:
            self._waiting.pop(request_id, None)
        reply = box[0]
        if isinstance(reply, ErrorResponse):
            raise MCPError(reply.code, reply.message, reply.data)
        return reply.result

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self._send(Notification(method, params))

    async def cancel(self, request_id: Any, reason: str = "cancelled by test") -> None:
        await self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})

    async def _receive(self, frames: Any) -> None:
        async for frame in frames:
            decoded = decode_message(frame)
            items = decoded.items if isinstance(decoded, Batch) else [decoded]
            for item in items:
                await self._on_message(item)

    async def _on_message(self, item: Any) -> None:
        if isinstance(item, (Response, ErrorResponse)):
            waiting = self._waiting.get(item.id)
            if waiting:
                waiting[1].append(item)
                waiting[0].set()
        elif isinstance(item, Notification):
            self.notifications.append({"method": item.method, "params": item.params})
            self._notified.set()
            self._notified = anyio.Event()
        elif isinstance(item, Request):
            await self._answer_server_request(item)
        elif isinstance(item, InvalidMessage):
            raise AssertionError(f"server sent an invalid message: {item}")

    async def _answer_server_request(self, request: Request) -> None:
        handler = self.handlers.get(request.method)
        if handler is None:
            await self._send(ErrorResponse(request.id, METHOD_NOT_FOUND, f"client has no handler for {request.method}"))
            return
        result = handler(request.params or {})
        if inspect.isawaitable(result):
            result = await result
        await self._send(Response(request.id, result))

    # ------------------------------------------------------------------ notifications

    async def wait_notification(self, method: str, *, timeout: float = 5, where: Callable[[dict[str, Any]], bool] | None = None,
                                after: int = 0) -> dict[str, Any]:
        """The first notification named `method` (from index `after` on) matching `where`; waits up to `timeout`."""
        with anyio.fail_after(timeout):
            while True:
                for note in self.notifications[after:]:
                    if note["method"] == method and (where is None or where(note["params"] or {})):
                        return note
                await self._notified.wait()

    def notifications_named(self, method: str) -> list[dict[str, Any]]:
        return [n for n in self.notifications if n["method"] == method]

    # ------------------------------------------------------------------ MCP methods

    async def list_tools(self) -> list[dict[str, Any]]:
        return await self._list("tools/list", "tools")

    async def list_resources(self) -> list[dict[str, Any]]:
        return await self._list("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        return await self._list("resources/templates/list", "resourceTemplates")

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self._list("prompts/list", "prompts")

    async def _list(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        for _ in range(10_000):
            page = await self.request(method, params)
            items.extend(page[key])
            if not page.get("nextCursor"):
                return items
            params = {"cursor": page["nextCursor"]}
        raise AssertionError(f"{method} never stopped paginating")

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *, progress_token: Any = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        return await self.request("tools/call", params)

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        return (await self.request("resources/read", {"uri": uri}))["contents"]

    async def subscribe(self, uri: str) -> None:
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        return await self.request("prompts/get", {"name": name, "arguments": arguments or {}})

    async def complete(self, ref: dict[str, Any], argument: dict[str, str], context: dict[str, str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"ref": ref, "argument": argument}
        if context is not None:
            params["context"] = {"arguments": context}
        return (await self.request("completion/complete", params))["completion"]

    async def set_level(self, level: str) -> None:
        await self.request("logging/setLevel", {"level": level})


@contextlib.asynccontextmanager
async def connect(
    app: MCPServer,
    *,
    protocol_version: str = LATEST_HANDSHAKE,
    elicitation: ClientHandler | None = None,
    sampling: ClientHandler | None = None,
    roots: list[dict[str, Any]] | None = None,
    initialize: bool = True,
) -> AsyncIterator[Client]:
    """Run `app` in memory and yield a client that has completed the initialize handshake.

    Passing `elicitation`, `sampling` or `roots` declares that capability and answers the
    server's requests for it (`roots` is the list returned by `roots/list`).
    """
    capabilities: dict[str, Any] = {}
    handlers: dict[str, ClientHandler] = {}
    if elicitation is not None:
        capabilities["elicitation"] = {"form": {}}
        handlers["elicitation/create"] = elicitation
    if sampling is not None:
        capabilities["sampling"] = {}
        handlers["sampling/createMessage"] = sampling
    if roots is not None:
        capabilities["roots"] = {"listChanged": True}
        handlers["roots/list"] = lambda params: {"roots": roots}
    send, receive = memory_pipe()
    async with app.running(), anyio.create_task_group() as tg:
        session = Session(app, MemoryWriter(send), tg)
        client = Client(session, handlers)
        tg.start_soon(client._receive, receive)
        try:
            if initialize:
                client.initialize_result = await client.request("initialize", {
                    "protocolVersion": protocol_version,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "mcp_kit.testing", "version": "1"},
                })
                await client.notify("notifications/initialized")
            yield client
        finally:
            session.close()
            send.close()
            tg.cancel_scope.cancel()
