"""An in-memory MCP client for testing servers without processes or sockets.

    app = MCPServer("calculator")

    @app.tool
    def add(a: int, b: int) -> int:
        return a + b

    async with connect(app) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert result["content"][0]["text"] == "3"  # a float result would read "3.0"

Messages cross as real JSON, so what passes here passes on the wire. Results are the wire
JSON (dicts); errors raise `MCPError` with the JSON-RPC code.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio

from ._eras.session import Session
from ._protocol.dispatcher import Dispatcher
from ._protocol.jsonrpc import (
    Batch,
    ErrorResponse,
    Notification,
    Request,
    Response,
    decode_message,
    encode_message,
)
from ._protocol.versions import LATEST_HANDSHAKE, LATEST_STATELESS
from ._serving.server import MCPServer
from ._transports.memory import MemoryWriter, memory_pipe
from .client._base import BaseClient, ClientHandler

__all__ = ["Client", "connect"]


class Client(BaseClient):
    """A minimal MCP client bound to one in-memory session (see `BaseClient` for its methods)."""

    def __init__(self, session: Session, dispatcher: Dispatcher, handlers: dict[str, ClientHandler]) -> None:
        super().__init__(handlers)
        self.session = session
        self._dispatcher = dispatcher

    async def _send(self, message: Request | Notification | Response | ErrorResponse) -> None:
        await self._dispatcher.feed(decode_message(encode_message(message)))

    async def cancel(self, request_id: Any, reason: str = "cancelled by test") -> None:
        await super().cancel(request_id, reason)

    async def _receive(self, frames: Any) -> None:
        with frames:  # closed however the loop ends (the client's task group is cancelled at the end)
            async for frame in frames:
                decoded = decode_message(frame)
                items = decoded.items if isinstance(decoded, Batch) else [decoded]
                for item in items:
                    await self._on_message(item)


@contextlib.asynccontextmanager
async def connect(
    app: MCPServer,
    *,
    protocol_version: str = LATEST_HANDSHAKE,
    elicitation: ClientHandler | None = None,
    sampling: ClientHandler | None = None,
    roots: list[dict[str, Any]] | None = None,
    extensions: dict[str, dict[str, Any]] | None = None,
    initialize: bool = True,
    stateless: bool = False,
) -> AsyncIterator[Client]:
    """Run `app` in memory and yield a client that has completed the initialize handshake (`stateless`: a
    2026-07-28 client instead, which sends `server/discover` and then the envelope in every request).

    Passing `elicitation`, `sampling` or `roots` declares that capability and answers the
    server's requests for it (`roots` is the list returned by `roots/list`); `extensions` is the
    client's `capabilities.extensions` (id -> settings, SEP-2133).
    """
    capabilities: dict[str, Any] = {}
    if extensions is not None:
        capabilities["extensions"] = extensions
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
    async with app.running(), Dispatcher(MemoryWriter(send)) as dispatcher, anyio.create_task_group() as tg:
        session = Session(app, dispatcher)
        dispatcher.attach(session)
        client = Client(session, dispatcher, handlers)
        tg.start_soon(client._receive, receive)
        try:
            if initialize and stateless:  # 2026-07-28: discover, then every request stands alone
                client.adopt(await client.discover(LATEST_STATELESS), LATEST_STATELESS)
            elif initialize:
                client.initialize_result = await client.request("initialize", {
                    "protocolVersion": protocol_version,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "mcp_kit.testing", "version": "1"},
                })
                await client.notify("notifications/initialized")
            yield client
        finally:
            dispatcher.close()
            send.close()
            tg.cancel_scope.cancel()
