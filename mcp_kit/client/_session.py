"""`ClientSession`: an MCP conversation with a server over any client transport.

    async with connect("python -m servers.stock --provider sample") as session:
        tools = await session.list_tools()
        result = await session.call_tool("get_stock_price", {"ticker": "AAPL"})

Answers `ping` by itself, hands log messages and other notifications to callbacks, and turns a
vanished server into `ConnectionClosed` for every waiting request instead of a hang.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any

import anyio

from .. import __version__
from .._protocol.errors import MCPError
from .._protocol.jsonrpc import INTERNAL_ERROR, ErrorResponse, InvalidMessage, Request
from .._protocol.versions import LATEST_HANDSHAKE
from ._base import BaseClient, ClientHandler, Outgoing, call_maybe_async
from ._eras import negotiate_auto
from ._errors import ClientError, ConnectionClosed
from ._transport import Transport

logger = logging.getLogger("mcp_kit.client")

LogCallback = Callable[[dict[str, Any]], Any]
NotificationCallback = Callable[[dict[str, Any]], Any]


class ClientSession(BaseClient):
    """A client bound to one transport; start `run()` in a task, then `initialize()`."""

    default_timeout = 60.0

    def __init__(self, transport: Transport, *, handlers: dict[str, ClientHandler] | None = None,
                 on_log: LogCallback | None = None, on_notification: NotificationCallback | None = None,
                 client_name: str = "mcp-kit") -> None:
        super().__init__({"ping": lambda params: {}, **(handlers or {})})
        self.transport = transport
        self.on_log = on_log
        self.on_notification = on_notification
        self.client_info = {"name": client_name, "version": __version__}
        self.handshake_version = LATEST_HANDSHAKE
        self.ended = anyio.Event()  # set once the conversation is over (the transport ended)

    # ------------------------------------------------------------------ conversation

    async def run(self) -> None:
        """Deliver incoming messages until the transport ends; then fail whatever still waits."""
        try:
            async with anyio.create_task_group() as tg:  # the server's requests are answered concurrently
                async for item in self.transport.incoming:
                    if isinstance(item, Request):
                        tg.start_soon(self._answer_server_request, item)
                    else:
                        await self._on_message(item)
                tg.cancel_scope.cancel()
        finally:
            self._fail_pending(self.transport.closed_error or ConnectionClosed("the connection was closed"))
            self.ended.set()

    async def initialize(
        self, protocol_version: str = LATEST_HANDSHAKE, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """The handshake: initialize, then notifications/initialized. Returns the server's answer."""
        capabilities = self.capabilities()
        params = {"protocolVersion": protocol_version, "capabilities": capabilities, "clientInfo": self.client_info}
        try:
            result = await self.request("initialize", params, timeout=timeout)
        except TimeoutError as exc:
            raise ClientError(
                "\n".join([str(exc) + " (is this an MCP server?)", *self.transport_diagnosis()])
            ) from None
        self.initialize_result = result
        self.transport.protocol_version = result.get("protocolVersion")
        await self.notify("notifications/initialized")
        return result

    async def handshake(self, *, timeout: float | None = None) -> dict[str, Any]:
        return await self.initialize(self.handshake_version, timeout=timeout)

    async def negotiate(self, mode: str = "legacy", *, timeout: float | None = None) -> dict[str, Any]:
        """Agree on the era: `legacy` (initialize), `auto` (server/discover, falling back to initialize) or a
        2026-07-28 version (server/discover only). Returns the server's answer in `initialize`'s shape."""
        if mode == "legacy":
            return await self.initialize(self.handshake_version, timeout=timeout)
        try:
            if mode == "auto":
                return await negotiate_auto(self, timeout=timeout)
            return self.adopt(await self.discover(mode, timeout=timeout), mode)
        except TimeoutError as exc:
            lines = [str(exc) + " (is this an MCP server?)", *self.transport_diagnosis()]
            raise ClientError("\n".join(lines)) from None

    def adopt(self, discovered: dict[str, Any], version: str) -> dict[str, Any]:
        result = super().adopt(discovered, version)
        self.transport.protocol_version = version
        return result

    @property
    def era(self) -> str:
        """"2026-07-28" when the server was adopted in the stateless era, else "handshake"."""
        return self.stateless_version or "handshake"

    def transport_diagnosis(self) -> list[str]:
        """What the transport saw that may explain a failure (stray stdout, stderr tail)."""
        diagnose = getattr(self.transport, "diagnosis", None)
        return diagnose() if diagnose is not None else []

    async def ping(self) -> None:
        if self.stateless_version is not None:  # 2026-07-28 has no ping; a discover shows the server answers
            await self.discover(self.stateless_version)
            return
        await self.request("ping")

    @property
    def server_info(self) -> dict[str, Any]:
        return self.initialize_result.get("serverInfo") or {}

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self.initialize_result.get("capabilities") or {}

    @property
    def instructions(self) -> str | None:
        return self.initialize_result.get("instructions")

    # ------------------------------------------------------------------ hooks

    async def _send(self, message: Outgoing) -> None:
        await self.transport.send(message)

    async def _timed_out(self, request_id: Any, method: str) -> None:
        with contextlib.suppress(ClientError):
            await self.cancel(request_id, f"no answer to {method} in time")

    async def _abandoned(self, request_id: Any, method: str) -> None:
        if method not in ("initialize", "server/discover"):  # the specification forbids cancelling those
            with contextlib.suppress(ClientError, OSError):
                await self.cancel(request_id, "the caller no longer waits for the answer")

    async def _on_notification(self, note: dict[str, Any]) -> None:
        await super()._on_notification(note)
        if note["method"] == "notifications/message" and self.on_log is not None:
            await call_maybe_async(self.on_log, note["params"] or {})
        if self.on_notification is not None:
            await call_maybe_async(self.on_notification, note)

    async def _on_invalid_message(self, item: InvalidMessage) -> None:
        logger.warning("the server sent something that is not a JSON-RPC message: %s",
                       item.error.message if item.error else item)

    async def _answer_server_request(self, request: Request) -> None:
        try:
            await super()._answer_server_request(request)
        except ClientError:
            pass
        except MCPError as exc:  # the handler's own refusal: the server gets it as the answer
            with contextlib.suppress(ClientError):
                await self._send(ErrorResponse(request.id, exc.code, exc.message, exc.data))
        except Exception as exc:  # a failing handler answers with an error; the conversation goes on
            logger.exception("handler for %s failed", request.method)
            with contextlib.suppress(ClientError):
                await self._send(ErrorResponse(request.id, INTERNAL_ERROR, f"client handler failed: {exc}"))
