"""One MCP connection: the only module that knows both JSON-RPC and MCP.

A `Session` owns a dispatcher and answers MCP methods for it: lifecycle (initialize, era and
version), capabilities, routing to the server's registries, subscriptions, log level, and
shaping results for the negotiated version. Requests that carry the 2026-07-28 per-request
envelope are served by `modern.py` on the same session.
"""

from __future__ import annotations

import base64
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from . import modern
from .completions import CompletionRegistry
from .context import LOG_LEVELS, Context
from .dispatcher import Dispatcher, MessageWriter
from .errors import MCPError, invalid_params
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    EncodeError,
    JSONRPCError,
    Notification,
    Request,
    RequestId,
)
from .prompts import render_prompt
from .resources import bind_resource, read_resource
from .tools import call_tool
from .versions import BATCH_VERSIONS, HANDSHAKE_VERSIONS, at_least, negotiate, shape_metadata, shape_tool_result

if TYPE_CHECKING:
    from .server import MCPServer

logger = logging.getLogger("mcp_kit.session")

Route = Callable[["Session", dict[str, Any], Context], Awaitable[Any]]


class Session:
    """The server side of one MCP connection (or one HTTP session)."""

    def __init__(self, server: MCPServer, writer: MessageWriter, task_group: TaskGroup, session_id: str | None = None) -> None:
        self.server = server
        self.session_id = session_id or uuid.uuid4().hex
        self.dispatcher = Dispatcher(self, writer, task_group)
        self._tg = task_group
        self.version: str | None = None
        self.initialized = False
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] = {}
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()
        self._roots: list[Any] | None = None
        self.closed = False
        self.last_active = time.monotonic()
        server.sessions.add(self)

    # ------------------------------------------------------------------ dispatcher interface

    def accepts_batches(self) -> bool:
        return self.version in BATCH_VERSIONS

    async def handle_request(self, request: Request) -> Any:
        self.last_active = time.monotonic()
        params = request.params or {}
        meta = params.get("_meta")
        if meta is not None:
            check_meta(meta)
        if meta and modern.PROTOCOL_VERSION_KEY in meta or request.method == "server/discover":
            return await modern.handle(self, request, params)
        method = request.method
        if method == "initialize":
            return self._initialize(params)
        if self.version is None and method != "ping":
            raise MCPError(INVALID_REQUEST, f"Invalid Request: '{method}' before initialize. Send 'initialize' first.")
        route = ROUTES.get(method)
        if route is None:
            raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method}")
        return await route(self, params, Context(self, request.id, meta))

    async def handle_notification(self, notification: Notification) -> None:
        method = notification.method
        if method == "notifications/initialized":
            self.initialized = True
            if "roots" in self.client_capabilities:
                self._tg.start_soon(self._refresh_roots)
        elif method == "notifications/roots/list_changed":
            self._roots = None
            self._tg.start_soon(self._refresh_roots)
        elif method in ("notifications/progress", "notifications/message"):
            pass
        else:
            logger.debug("ignoring notification %s", method)

    # ------------------------------------------------------------------ lifecycle

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.version is not None:
            raise MCPError(INVALID_REQUEST, f"Invalid Request: this session is already initialized (protocol {self.version}); "
                                            "to start over, open a new connection and send initialize there")
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise invalid_params("initialize needs 'protocolVersion' (a string such as '2025-11-25')")
        capabilities = params.get("capabilities")
        if capabilities is not None and not isinstance(capabilities, dict):
            raise invalid_params("initialize: 'capabilities' must be an object such as {\"sampling\": {}} ({} for none)")
        client_info = params.get("clientInfo")
        if client_info is not None and not isinstance(client_info, dict):
            raise invalid_params("initialize: 'clientInfo' must be an object {\"name\": ..., \"version\": ...}")
        self.version = negotiate(requested)
        self.client_capabilities = capabilities or {}
        self.client_info = client_info or {}
        self._roots = None
        result: dict[str, Any] = {
            "protocolVersion": self.version,
            "capabilities": self.server.capabilities(self.version),
            "serverInfo": self.server.info(self.version),
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        return result

    def close(self) -> None:
        """The connection is gone: stop requests, fail outbound waits, drop subscriptions."""
        if self.closed:
            return
        self.closed = True
        self.dispatcher.cancel_all()
        self.dispatcher.close()
        self.server.hub.drop(self)
        self.server.sessions.discard(self)
        for listener in list(modern.listeners_of(self)):
            listener.close()

    # ------------------------------------------------------------------ helpers used by Context and the server

    def version_for(self, meta: dict[str, Any] | None) -> str:
        if meta and modern.PROTOCOL_VERSION_KEY in meta:
            return str(meta[modern.PROTOCOL_VERSION_KEY])
        return self.version or HANDSHAKE_VERSIONS[-1]

    def client_capabilities_for(self, meta: dict[str, Any] | None) -> dict[str, Any]:
        if meta and modern.PROTOCOL_VERSION_KEY in meta:
            return meta.get(modern.CLIENT_CAPABILITIES_KEY) or {}
        return self.client_capabilities

    async def notify(self, method: str, params: dict[str, Any] | None = None, related_to: RequestId | None = None) -> None:
        if not self.closed:
            await self.dispatcher.notify(method, params, related_to)

    def post(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification without waiting (from synchronous code)."""
        if not self.closed:
            self._tg.start_soon(self._notify_or_log, method, params, None)

    def post_related(self, method: str, params: dict[str, Any] | None, related_to: RequestId) -> None:
        """Send a notification on the stream of request `related_to`, without waiting."""
        if not self.closed:
            self._tg.start_soon(self._notify_or_log, method, params, related_to)

    async def _notify_or_log(self, method: str, params: dict[str, Any] | None, related_to: RequestId | None) -> None:
        """A notification nobody awaits: a failure (e.g. it cannot be encoded) is logged, never fatal."""
        try:
            await self.notify(method, params, related_to)
        except Exception as exc:
            logger.error("could not send %s: %s", method, exc)

    def unencodable_result(self, request: Request, error: EncodeError) -> Any:
        """The answer when a result cannot be encoded: a tool error result for tools/call, else -32603."""
        params = request.params or {}
        if request.method == "tools/call":
            result: dict[str, Any] = {"isError": True, "content": [{"type": "text", "text": (
                f"Tool '{params.get('name')}' produced a result that cannot be sent as JSON: {error}. "
                "The tool ran; its output needs a valid encoding (e.g. names given with escapes).")}]}
            meta = params.get("_meta")
            if isinstance(meta, dict) and modern.PROTOCOL_VERSION_KEY in meta:
                result["resultType"] = "complete"
            return result
        raise MCPError(INTERNAL_ERROR, f"Internal error: the result of {request.method} cannot be sent as JSON: {error}",
                       {"reason": "unencodable result"})

    async def log(self, level: str, data: Any, logger_name: str | None, related_to: RequestId | None,
                  meta: dict[str, Any] | None) -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if meta and modern.PROTOCOL_VERSION_KEY in meta:
            threshold = modern.log_level(meta)
            if threshold is None:
                return  # 2026-07-28: no logLevel in the envelope means no log messages
        else:
            threshold = self.log_level
        if threshold is not None and LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger_name:
            params["logger"] = logger_name
        await self.notify("notifications/message", params, related_to)

    async def ask(self, method: str, params: dict[str, Any], *, timeout: float, related_to: RequestId | None) -> Any:
        """A server-to-client request (handshake era), shaped for the negotiated version."""
        if method == "elicitation/create" and not at_least(self.version or "", "2025-11-25"):
            params = {k: v for k, v in params.items() if k != "mode"}
        return await self.dispatcher.request(method, params, timeout=timeout, related_to=related_to)

    def resource_updated(self, uri: str) -> None:
        """Subscriber interface: the hub tells us `uri` changed."""
        self.post("notifications/resources/updated", {"uri": uri})

    async def list_roots(self) -> list[Any]:
        if "roots" not in self.client_capabilities:
            return []
        if self._roots is None:
            await self._refresh_roots()
        return list(self._roots or [])

    async def _refresh_roots(self) -> None:
        from mcp_types import Root

        try:
            with anyio.fail_after(30):
                result = await self.dispatcher.request("roots/list", {}, timeout=30)
            self._roots = [Root.model_validate(r) for r in (result or {}).get("roots", [])]
        except Exception as exc:
            logger.warning("roots/list failed: %s", exc)
            self._roots = []
        self.server.roots_changed(self)


# ---------------------------------------------------------------------- parameter checks


def check_meta(meta: Any) -> None:
    """-32602 unless `_meta` is an object whose progress token (if any) is a string or a number."""
    if not isinstance(meta, dict):
        raise invalid_params(f"'_meta' must be an object, not {_json_type(meta)}")
    token = meta.get("progressToken")
    if token is not None and (isinstance(token, bool) or not isinstance(token, (str, int, float))):
        raise invalid_params(f"'_meta.progressToken' must be a string or a number, not {_json_type(token)}")


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {str: "a string", int: "a number", float: "a number", list: "an array", dict: "an object"}.get(
        type(value), "null" if value is None else type(value).__name__)


# ---------------------------------------------------------------------- pagination


def paginate(items: list[Any], params: dict[str, Any], page_size: int) -> tuple[list[Any], str | None]:
    """Slice a list by an opaque cursor; an invalid cursor is -32602."""
    cursor = params.get("cursor")
    start = 0
    if cursor is not None:
        try:
            start = int(base64.urlsafe_b64decode(str(cursor).encode()).decode())
        except (ValueError, UnicodeDecodeError):
            raise invalid_params(f"Invalid cursor {cursor!r}: pass back a nextCursor from a previous page") from None
        if start < 0 or start > len(items):
            raise invalid_params(f"Invalid cursor {cursor!r}: it points outside the list")
    end = start + page_size
    next_cursor = base64.urlsafe_b64encode(str(end).encode()).decode() if end < len(items) else None
    return items[start:end], next_cursor


def _page(key: str, items: list[Any], params: dict[str, Any], page_size: int) -> dict[str, Any]:
    page, next_cursor = paginate(items, params, page_size)
    result: dict[str, Any] = {key: page}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


# ---------------------------------------------------------------------- handshake-era routes


async def _ping(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    return {}


async def _list_tools(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    return session.server.tools.page(ctx.protocol_version, params.get("cursor"), session.server.page_size)


async def _call_tool(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    name = params.get("name")
    if not isinstance(name, str):
        raise invalid_params("tools/call needs 'name' (a string)")
    server = session.server
    tool = server.tools.get(name)
    if tool is None:
        raise server.tools.unknown_tool(name)
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise invalid_params("'arguments' must be an object")
    if server.tool_hooks:
        started = time.perf_counter()
        result = await call_tool(tool, arguments, ctx)
        server.record_tool_call(session, name, arguments, result, time.perf_counter() - started)
    else:
        result = await call_tool(tool, arguments, ctx)
    return shape_tool_result(result, ctx.protocol_version)


async def _list_resources(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    version = ctx.protocol_version
    items = [shape_metadata(r, version) for r in await session.server.resources.listed()]
    return _page("resources", items, params, session.server.page_size)


async def _list_templates(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    version = ctx.protocol_version
    items = [shape_metadata(t.definition(), version) for t in session.server.resources.templates.values()]
    return _page("resourceTemplates", items, params, session.server.page_size)


def _uri(params: dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise invalid_params("'uri' is required (a string)")
    return uri


async def _read_resource(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    uri = _uri(params)
    server = session.server
    if not server.tool_hooks:
        return {"contents": await read_resource(server.resources, uri, ctx)}
    started = time.perf_counter()
    try:
        contents = await read_resource(server.resources, uri, ctx)
    except JSONRPCError as exc:  # refused: not found, outside what the server shows, invalid URI variables
        server.record_resource_read(session, uri, exc.message, time.perf_counter() - started)
        raise
    except Exception as exc:
        server.record_resource_read(session, uri, f"{type(exc).__name__}: {exc}", time.perf_counter() - started)
        raise
    server.record_resource_read(session, uri, None, time.perf_counter() - started)
    return {"contents": contents}


async def _subscribe(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    uri = _uri(params)
    await bind_resource(session.server.resources, uri, ctx)  # refused exactly as a read of it would be
    session.server.hub.subscribe(uri, session)  # -32602 past the subscription limits
    session.subscriptions.add(uri)
    await session.server.hub.ready([uri])  # answered once its watcher (if any) can see changes
    return {}


async def _unsubscribe(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    uri = _uri(params)
    session.subscriptions.discard(uri)
    session.server.hub.unsubscribe(uri, session)
    return {}


async def _list_prompts(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    version = ctx.protocol_version
    items = [shape_metadata(p.definition(), version) for p in session.server.prompts.values()]
    return _page("prompts", items, params, session.server.page_size)


async def _get_prompt(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    name = params.get("name")
    entry = session.server.prompts.get(name) if isinstance(name, str) else None
    if entry is None:
        known = ", ".join(session.server.prompts) or "(none)"
        raise invalid_params(f"Unknown prompt {name!r}. Available prompts: {known}")
    arguments = params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise invalid_params(f"'arguments' must be an object of strings, not {_json_type(arguments)}")
    return await render_prompt(entry, arguments, ctx)


async def _complete(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict) or "name" not in argument:
        raise invalid_params("completion/complete needs 'ref' and 'argument' {name, value}")
    context = params.get("context")
    if context is not None and not (isinstance(context, dict) and isinstance(context.get("arguments") or {}, dict)):
        raise invalid_params("'context' must be an object {\"arguments\": {name: value}}")
    completions: CompletionRegistry = session.server.completions
    return {"completion": await completions.complete(ref, argument, params.get("context"))}


async def _set_level(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    level = params.get("level")
    if level not in LOG_LEVELS:
        raise invalid_params(f"Invalid log level {level!r}; expected one of {', '.join(LOG_LEVELS)}")
    session.log_level = level
    return {}


ROUTES: dict[str, Route] = {
    "ping": _ping,
    "tools/list": _list_tools,
    "tools/call": _call_tool,
    "resources/list": _list_resources,
    "resources/templates/list": _list_templates,
    "resources/read": _read_resource,
    "resources/subscribe": _subscribe,
    "resources/unsubscribe": _unsubscribe,
    "prompts/list": _list_prompts,
    "prompts/get": _get_prompt,
    "completion/complete": _complete,
    "logging/setLevel": _set_level,
}
