"""The client side of an MCP conversation, independent of how messages travel.

`BaseClient` matches answers to requests, records notifications, answers the server's
requests from a table of handlers, routes progress notifications to callbacks, and offers the
MCP methods (list_tools, call_tool, ...). A subclass supplies `_send`; whatever receives
messages calls `_on_message`. Results are the wire JSON (dicts); JSON-RPC errors raise MCPError.
Both `mcp_kit.testing.Client` (in memory) and `mcp_kit.client.ClientSession` (stdio, HTTP) build on it.
"""

from __future__ import annotations

import collections
import inspect
import itertools
import logging
from collections.abc import Callable, Iterator
from typing import Any

import anyio

from .. import __version__
from .._protocol.errors import MCPError
from .._protocol.jsonrpc import (
    METHOD_NOT_FOUND,
    ErrorResponse,
    InvalidMessage,
    Notification,
    Request,
    Response,
)
from .._protocol.versions import DISCOVER_METHOD
from ._eras import (
    INPUT_ROUND_METHODS,
    NOT_IN_STATELESS,
    answer_input_rounds,
    as_initialize_result,
    capabilities_of,
    stamp,
)

logger = logging.getLogger("mcp_kit.client")

ClientHandler = Callable[[dict[str, Any]], Any]
ProgressCallback = Callable[[float, float | None, str | None], Any]
Outgoing = Request | Notification | Response | ErrorResponse


async def call_maybe_async(callback: Callable[..., Any], *args: Any) -> Any:
    """Call `callback`; await the result when it is awaitable."""
    result = callback(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


class NotificationLog:
    """The notifications a client heard, oldest first: the last `limit` kept, older ones forgotten, so a long-lived
    session (a proxy's upstream one) does not grow without end.

    Positions count every notification ever heard: `len(log)` is that count (a mark for `wait_notification(after=)`
    and `log[mark:]`), and a slice or an index names those positions; iterating, comparing and slicing give the
    kept ones only (a forgotten position is skipped; indexing one is an IndexError)."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self.forgotten = 0  # how many were dropped from the front
        self._kept: collections.deque[dict[str, Any]] = collections.deque(maxlen=limit)

    def append(self, note: dict[str, Any]) -> None:
        if len(self._kept) == self.limit:
            self.forgotten += 1
        self._kept.append(note)

    def __len__(self) -> int:
        return self.forgotten + len(self._kept)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._kept)

    def __getitem__(self, where: Any) -> Any:
        if isinstance(where, slice):
            start, stop, step = where.indices(len(self))
            if step == 1:
                return list(itertools.islice(self._kept, max(start - self.forgotten, 0), max(stop - self.forgotten, 0)))
            kept = list(self._kept)
            return [kept[i - self.forgotten] for i in range(start, stop, step) if i >= self.forgotten]
        index = where + len(self) if where < 0 else where
        if not self.forgotten <= index < len(self):
            raise IndexError(f"notification {where} is not kept (the last {self.limit} are)")
        return self._kept[index - self.forgotten]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NotificationLog):
            return list(self) == list(other)
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"NotificationLog({list(self)!r}, forgotten={self.forgotten})"


class BaseClient:
    """Request/answer bookkeeping and the MCP methods; subclasses say how messages leave."""

    default_timeout: float = 30.0
    pagination_limit: int = 10_000
    notification_limit: int = 10_000  # the notifications kept (`notifications`); older ones are forgotten

    def __init__(self, handlers: dict[str, ClientHandler] | None = None) -> None:
        self.handlers: dict[str, ClientHandler] = handlers if handlers is not None else {}
        self.notifications = NotificationLog(self.notification_limit)
        self.initialize_result: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._waiting: dict[Any, tuple[anyio.Event, list[Any]]] = {}
        self._notified = anyio.Event()
        self._progress: dict[Any, ProgressCallback] = {}
        self._progress_tokens = itertools.count(1)
        self.client_info: dict[str, Any] = {"name": "mcp-kit", "version": __version__}
        self.stateless_version: str | None = None  # set when the server was adopted in the 2026-07-28 era
        self.discover_result: dict[str, Any] = {}
        self.log_level: str | None = None  # 2026-07-28: the envelope's logLevel (no log messages while None)

    # ------------------------------------------------------------------ plumbing

    async def _send(self, message: Outgoing) -> None:
        raise NotImplementedError

    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """Send a request; return its result or raise MCPError (TimeoutError after `timeout` seconds).

        In the 2026-07-28 era the request carries the envelope, and input-required rounds are answered
        with the handlers (`answer_question`) until the final result.
        """
        version = self.stateless_version
        if version is None or method in NOT_IN_STATELESS:
            return await self._request_once(method, params, timeout)
        stamped = stamp(params, version, self.capabilities(), self.client_info, self.log_level)
        result = await self._request_once(method, stamped, timeout)
        if method in INPUT_ROUND_METHODS:
            result = await answer_input_rounds(self, method, stamped, result,
                                               lambda m, p: self._request_once(m, p, timeout))
        return result

    def capabilities(self) -> dict[str, Any]:
        """The client capabilities this client declares: those its handlers make true."""
        return capabilities_of(self.handlers)

    async def answer_question(self, method: Any, params: dict[str, Any]) -> Any:
        """The answer to one question of an input-required round, from the handler of its method."""
        handler = self.handlers.get(method) if isinstance(method, str) else None
        if handler is None:
            raise MCPError(METHOD_NOT_FOUND, f"the server asked {method} in an input round; this client has no "
                                             "handler for it")
        return await call_maybe_async(handler, params)

    async def discover(self, version: str, *, timeout: float | None = None) -> dict[str, Any]:
        """One `server/discover` probe at `version` (the answer is not adopted)."""
        params = stamp(None, version, self.capabilities(), self.client_info, None)
        result = await self._request_once(DISCOVER_METHOD, params, timeout)
        return result if isinstance(result, dict) else {}

    def adopt(self, discovered: dict[str, Any], version: str) -> dict[str, Any]:
        """Talk to the server in the 2026-07-28 era at `version`, from its `server/discover` answer."""
        self.stateless_version = version
        self.discover_result = discovered
        self.initialize_result = as_initialize_result(discovered, version)
        return self.initialize_result

    async def handshake(self, *, timeout: float | None = None) -> dict[str, Any]:
        """The handshake era's `initialize` (subclasses that can talk both eras implement it)."""
        raise NotImplementedError

    async def _request_once(self, method: str, params: dict[str, Any] | None, timeout: float | None) -> Any:
        request_id = next(self._ids)
        event, box = anyio.Event(), list[Any]()
        self._waiting[request_id] = (event, box)
        limit = self.default_timeout if timeout is None else timeout
        try:
            await self._send(Request(request_id, method, params))
            try:
                with anyio.move_on_after(limit):
                    await event.wait()
            except anyio.get_cancelled_exc_class():
                if not box:  # the caller gave up: the server may stop working on it
                    with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                        await self._abandoned(request_id, method)
                raise
            if not box:
                await self._timed_out(request_id, method)
                raise TimeoutError(f"no answer to {method} within {limit:g} s")
        finally:
            self._waiting.pop(request_id, None)
        reply = box[0]
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, ErrorResponse):
            raise MCPError(reply.code, reply.message, reply.data)
        return reply.result

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self._send(Notification(method, params))

    async def cancel(self, request_id: Any, reason: str = "cancelled by the client") -> None:
        await self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})

    async def _timed_out(self, request_id: Any, method: str) -> None:
        """Called when a request got no answer in time (before TimeoutError is raised)."""

    async def _abandoned(self, request_id: Any, method: str) -> None:
        """Called (shielded, briefly) when the caller of a request was cancelled before its answer came."""

    def _fail_pending(self, error: BaseException) -> None:
        """Wake every waiting request with `error` (the connection is gone)."""
        for event, box in list(self._waiting.values()):
            if not box:
                box.append(error)
                event.set()

    async def _on_message(self, item: Any) -> None:
        if isinstance(item, (Response, ErrorResponse)):
            waiting = self._waiting.get(item.id)
            if waiting and not waiting[1]:
                waiting[1].append(item)
                waiting[0].set()
        elif isinstance(item, Notification):
            note = {"method": item.method, "params": item.params}
            self.notifications.append(note)
            self._notified.set()
            self._notified = anyio.Event()
            await self._on_notification(note)
        elif isinstance(item, Request):
            await self._answer_server_request(item)
        elif isinstance(item, InvalidMessage):
            await self._on_invalid_message(item)

    async def _on_notification(self, note: dict[str, Any]) -> None:
        """Route progress notifications to the callback registered for their token."""
        if note["method"] == "notifications/progress":
            params = note["params"] or {}
            callback = self._progress.get(params.get("progressToken"))
            if callback is not None:
                await call_maybe_async(callback, params.get("progress", 0), params.get("total"), params.get("message"))

    async def _on_invalid_message(self, item: InvalidMessage) -> None:
        raise AssertionError(f"server sent an invalid message: {item}")

    async def _answer_server_request(self, request: Request) -> None:
        handler = self.handlers.get(request.method)
        if handler is None:
            await self._send(ErrorResponse(request.id, METHOD_NOT_FOUND, f"client has no handler for {request.method}"))
            return
        result = await call_maybe_async(handler, request.params or {})
        await self._send(Response(request.id, result))

    # ------------------------------------------------------------------ notifications

    async def wait_notification(
        self, method: str, *, timeout: float = 5, where: Callable[[dict[str, Any]], bool] | None = None, after: int = 0
    ) -> dict[str, Any]:
        """The first notification named `method` (from position `after` on: `len(self.notifications)` before the
        request is the usual mark) matching `where`; waits up to `timeout`."""
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
        """Every item of a paginated list, following `nextCursor` (the objects: a server's other items are left out).
        A page that is not an object, or a cursor the server gave before, ends the list (the server would repeat
        itself); `pagination_limit` pages without an end is an AssertionError."""
        items: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        cursors: set[str] = set()
        for _ in range(self.pagination_limit):
            page = await self.request(method, params)
            if not isinstance(page, dict):
                logger.warning("%s: the server answered a page that is not an object; the list ends there", method)
                return items
            listed = page.get(key)
            items.extend(item for item in (listed if isinstance(listed, list) else []) if isinstance(item, dict))
            cursor = page.get("nextCursor")
            if isinstance(cursor, str) and cursor in cursors:
                logger.warning("%s: the server gave the cursor %.80r a second time; the list ends there",
                               method, cursor)
                return items
            if not isinstance(cursor, str) or not cursor:
                return items
            cursors.add(cursor)
            params = {"cursor": cursor}
        raise AssertionError(f"{method} never stopped paginating")

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *, progress_token: Any = None,
                        on_progress: ProgressCallback | None = None, timeout: float | None = None) -> dict[str, Any]:
        """Call a tool; with `on_progress`, progress notifications call it with (progress, total, message)."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if on_progress is not None and progress_token is None:
            progress_token = f"progress-{next(self._progress_tokens)}"
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        if on_progress is not None:
            self._progress[progress_token] = on_progress
        try:
            return await self.request("tools/call", params, timeout=timeout)
        finally:
            if on_progress is not None:
                self._progress.pop(progress_token, None)

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        return (await self.request("resources/read", {"uri": uri}))["contents"]

    async def subscribe(self, uri: str) -> None:
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        return await self.request("prompts/get", {"name": name, "arguments": arguments or {}})

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, str], context: dict[str, str] | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"ref": ref, "argument": argument}
        if context is not None:
            params["context"] = {"arguments": context}
        return (await self.request("completion/complete", params))["completion"]

    async def set_level(self, level: str) -> None:
        """The log level (2026-07-28: sent in every later request's envelope instead of `logging/setLevel`)."""
        if self.stateless_version is not None:
            self.log_level = level
            return
        await self.request("logging/setLevel", {"level": level})
