"""One MCP connection: the only module that knows both JSON-RPC and MCP, and where each request's era is decided.

A `Session` is the handler of a dispatcher. Every request enters through `handle_request`,
which decides its era once (`_in_stateless_era`): a request whose `_meta` carries the 2026-07-28
envelope, or `server/discover`, is served by the connection's `StatelessRequests`
(`stateless.py`); every other request belongs to this handshake-era session and gets its
`SessionChannel`. From there on the era is a value: routes (`_app/methods.py`) and `Context` ask the
scope, never the request.

The session's connection state (negotiated version, client info and capabilities, log level,
subscriptions) is one plain record, `SessionState` (`record.py`). The session reaches its
peer only through the `OutboundPort` it was given (`port.py`); whoever serves the connection
builds it.

Imports the application (never `_serving/server.py`), the method table and the stateless era; no transport.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .._app.application import Application
from .._app.channel import LOG_LEVELS
from .._app.context import Context
from .._app.methods import check_meta, route_of, uri_param
from .._app.pipeline import Call
from .._app.sourced import has_sources, proxies, served_by_uri
from .._primitives.resources import bind_resource
from .._protocol.errors import MCPError, ToolError, invalid_params
from .._protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    EncodeError,
    JSONRPCError,
    Notification,
    Request,
    RequestId,
)
from .._protocol.versions import (
    BATCH_VERSIONS,
    DISCOVER_METHOD,
    LATEST_HANDSHAKE,
    PRIMING_VERSIONS,
    PROTOCOL_VERSION_KEY,
    negotiate,
    shape_client_request,
)
from .._telemetry import hooks as telemetry_hooks
from .port import OutboundPort
from .record import SessionState
from .stateless import StatelessRequests

logger = logging.getLogger("mcp_kit.session")


def _in_stateless_era(method: str, meta: Any) -> bool:
    """The era decision, made once per request where it enters the session: 2026-07-28 or the handshake era.

    `meta` is the request's `_meta` (an object, or None): the stateless envelope is
    `versions.carries_envelope`'s. `handle_request` writes this test out (the call alone was 1-2 % of
    a trivial tool call); the dispatcher's unencodable-answer path, which sees the request again, calls it.
    """
    return (isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta) or method == DISCOVER_METHOD


class Session:
    """The server side of one MCP connection (or one HTTP session)."""

    def __init__(self, app: Application, port: OutboundPort, state: SessionState | None = None) -> None:
        """Serve `app` to the peer behind `port`; `state` continues a session recorded elsewhere (restoring
        its subscriptions), else a new session starts."""
        self.app = app
        self.state = state if state is not None else SessionState()
        self._port = port
        self.channel = SessionChannel(self, self.state, port)
        self._stateless = StatelessRequests(app, port, self, self.state.session_id)
        self._roots: list[Any] | None = None
        self.sourced_subscriptions: dict[str, Any] = {}  # URI -> the mounted proxy that took its subscription
        self.closed = False
        self.on_change: Callable[[], Awaitable[None]] | None = None  # persists the record (a shared backend)
        self.opened = time.monotonic()  # mcp.server.session.duration
        app.sessions.add(self)
        if app.source is None:  # a proxy's subscriptions live upstream
            self.state.subscriptions -= self._subscribe_again(self.state.subscriptions)

    @property
    def session_id(self) -> str:
        return self.state.session_id

    def record(self) -> dict[str, Any]:
        """The session's record (`SessionState.to_dict()`), for a backend to keep."""
        return self.state.to_dict()

    def restore(self, record: dict[str, Any]) -> None:
        """Take over what another process recorded for this session (its subscriptions included)."""
        fresh = SessionState.from_dict(record)
        state = self.state
        for uri in state.subscriptions - fresh.subscriptions:
            self.app.hub.unsubscribe(uri, self)
        fresh.subscriptions -= self._subscribe_again(fresh.subscriptions - state.subscriptions)
        state.protocol_version = fresh.protocol_version
        state.client_info = fresh.client_info
        state.client_capabilities = fresh.client_capabilities
        state.initialized = fresh.initialized
        state.log_level = fresh.log_level
        state.subscriptions = fresh.subscriptions

    def _subscribe_again(self, uris: set[str]) -> set[str]:
        """Subscribe to recorded `uris` on this process; returns those refused now (logged, to be dropped)."""
        refused = set()
        for uri in sorted(uris):
            try:
                self.app.hub.subscribe(uri, self)
            except MCPError as exc:
                logger.warning("session %s: not resubscribed to %s: %s", self.session_id, uri[:200], exc.message)
                refused.add(uri)
        return refused

    async def _changed(self) -> None:
        if self.on_change is not None:
            await self.on_change()

    # ------------------------------------------------------------------ dispatcher interface

    def accepts_batches(self) -> bool:
        return self.state.protocol_version in BATCH_VERSIONS

    def primes_event_streams(self) -> bool:
        """Whether SSE responses of this session open with a priming event (see versions.py)."""
        return self.state.protocol_version in PRIMING_VERSIONS  # versions.primes_event_streams, without a call

    async def handle_request(self, request: Request, principal: object | None = None) -> Any:
        params = request.params or {}
        meta = params.get("_meta")
        if meta is not None:
            check_meta(meta)
        method = request.method
        if (
            meta is not None and PROTOCOL_VERSION_KEY in meta
        ) or method == DISCOVER_METHOD:  # _in_stateless_era, inlined
            return await self._stateless.serve(request, params, principal)
        found = route_of(self.app, method)  # a core method's route, or an extension's
        if found is not None:
            if self.state.protocol_version is None:
                raise _before_initialize(method)
            route, endpoint = found
            pipeline = self.app.pipeline
            if pipeline is None:
                return await route(self.app, params, Context(self.channel, request.id, meta, principal))
            return await pipeline.handle(Call(method, params, Context(self.channel, request.id, meta, principal),
                                              self.app, _answer=endpoint))
        if method == "initialize":
            pipeline = self.app.pipeline
            if pipeline is None:
                result = self._initialize(params)
            else:
                result = await pipeline.handle(Call(method, params, Context(self.channel, request.id, meta, principal),
                                                    self.app, _answer=self._answer_initialize))
            await self._changed()
            return result
        own = _SESSION_METHODS.get(method)
        if own is None:
            if self.state.protocol_version is None:
                raise _before_initialize(method)
            raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method}")
        if self.state.protocol_version is None and method != "ping":
            raise _before_initialize(method)
        context = Context(self.channel, request.id, meta, principal)
        pipeline = self.app.pipeline
        if pipeline is None:
            result = await own(self, params, context)
        else:
            result = await pipeline.handle(Call(method, params, context, self.app,
                                                _answer=lambda call: own(self, call.params, call.ctx)))
        if own is not _ping:
            await self._changed()
        return result

    async def _answer_initialize(self, call: Call) -> Any:
        return self._initialize(call.params)

    async def handle_notification(self, notification: Notification) -> None:
        pipeline = self.app.pipeline
        params = notification.params or {}
        if pipeline is None:
            await self._on_notification(notification.method, params, None)
            return
        meta = params.get("_meta")
        context = Context(self.channel, None, meta if isinstance(meta, dict) else None)
        await pipeline.notify(Call(notification.method, params, context, self.app,
                                   _answer=lambda call: self._on_notification(call.method, call.params, call.ctx)))

    async def _on_notification(self, method: str, params: dict[str, Any], context: Context | None) -> None:
        handler = self.app.extension_notifications.get(method)
        if handler is not None:  # an extension's notification
            meta = params.get("_meta")
            await handler(params, context or Context(self.channel, None, meta if isinstance(meta, dict) else None))
            return
        if method == "notifications/initialized":
            self.state.initialized = True
            await self._changed()
            if "roots" in self.state.client_capabilities:
                self._port.start_soon(self._refresh_roots)
        elif method == "notifications/roots/list_changed":
            self._roots = None
            self._port.start_soon(self._refresh_roots)
        elif method in ("notifications/progress", "notifications/message"):
            pass
        else:
            logger.debug("ignoring notification %s", method)

    def unencodable_result(self, request: Request, error: EncodeError) -> Any:
        """The answer when a result cannot be encoded: a tool error result for tools/call, else -32603."""
        params = request.params or {}
        if request.method == "tools/call":
            result: dict[str, Any] = {"isError": True, "content": [{"type": "text", "text": (
                f"Tool '{params.get('name')}' produced a result that cannot be sent as JSON: {error}. "
                "The tool ran; its output needs a valid encoding (e.g. names given with escapes).")}]}
            if _in_stateless_era(request.method, params.get("_meta")):
                result["resultType"] = "complete"
            return result
        raise MCPError(
            INTERNAL_ERROR,
            f"Internal error: the result of {request.method} cannot be sent as JSON: {error}",
            {"reason": "unencodable result"},
        )

    def close(self) -> None:
        """The connection is gone (its dispatcher already stopped its requests): drop subscriptions and streams."""
        if self.closed:
            return
        self.closed = True
        probe = telemetry_hooks.active
        if probe is not None and self.state.protocol_version is not None:
            probe.session_closed(time.monotonic() - self.opened, self.state.protocol_version)
        self.app.hub.drop(self)
        self.app.sessions.discard(self)
        self._stateless.close()
        for proxy in proxies(self.app) if self.app.source is not None or self.app.mounts else ():
            proxy.source.session_closed(self.session_id)  # a proxy's, or a mounted proxy's, upstream sessions

    # ------------------------------------------------------------------ lifecycle

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        state = self.state
        if state.protocol_version is not None:
            raise MCPError(INVALID_REQUEST, "Invalid Request: this session is already initialized (protocol "
                                            f"{state.protocol_version}); to start over, open a new connection and send "
                                            "initialize there")
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise invalid_params("initialize needs 'protocolVersion' (a string such as '2025-11-25')")
        capabilities = params.get("capabilities")
        if capabilities is not None and not isinstance(capabilities, dict):
            raise invalid_params(
                "initialize: 'capabilities' must be an object such as {\"sampling\": {}} ({} for none)"
            )
        client_info = params.get("clientInfo")
        if client_info is not None and not isinstance(client_info, dict):
            raise invalid_params("initialize: 'clientInfo' must be an object {\"name\": ..., \"version\": ...}")
        state.protocol_version = negotiate(requested)
        state.client_capabilities = capabilities or {}
        state.client_info = client_info or {}
        self._roots = None
        result: dict[str, Any] = {
            "protocolVersion": state.protocol_version,
            "capabilities": self.app.capabilities(state.protocol_version),
            "serverInfo": self.app.info(state.protocol_version),
        }
        if self.app.instructions:
            result["instructions"] = self.app.instructions
        return result

    # ------------------------------------------------------------------ what the application and the hub call

    def list_changed(self, kind: str) -> None:
        """The application's list of `kind` ("tools", "resources", "prompts") changed."""
        if self.state.initialized:
            self.post(f"notifications/{kind}/list_changed")

    def resource_updated(self, uri: str) -> None:
        """Subscriber interface: the hub tells us `uri` changed."""
        self.post("notifications/resources/updated", {"uri": uri})

    async def deliver_update(self, uri: str) -> None:
        """`resource_updated`, awaited (the hub's delivery task calls it: no task per subscriber)."""
        try:
            await self.notify("notifications/resources/updated", {"uri": uri})
        except Exception as exc:
            logger.error("could not send notifications/resources/updated: %s", exc)

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, related_to: RequestId | None = None
    ) -> None:
        if not self.closed:
            await self._port.notify(method, params, related_to)

    def post(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification without waiting (from synchronous code)."""
        if not self.closed:
            self._port.post(method, params)

    # ------------------------------------------------------------------ roots

    async def list_roots(self) -> list[Any]:
        if "roots" not in self.state.client_capabilities:
            return []
        if self._roots is None:
            await self._refresh_roots()
        return list(self._roots or [])

    async def _refresh_roots(self) -> None:
        from mcp_types import Root

        try:
            result = await self._port.request("roots/list", {}, timeout=30)
            self._roots = [Root.model_validate(r) for r in (result or {}).get("roots", [])]
        except Exception as exc:
            logger.warning("roots/list failed: %s", exc)
            self._roots = []
        self.app.roots_changed(self)


def _before_initialize(method: str) -> MCPError:
    return MCPError(INVALID_REQUEST, f"Invalid Request: '{method}' before initialize. Send 'initialize' first.")


class SessionChannel:
    """The handshake era's request scope: one per session, answering from its record; questions are round trips."""

    __slots__ = ("_session", "_state", "_port")

    def __init__(self, session: Session, state: SessionState, port: OutboundPort) -> None:
        self._session = session
        self._state = state
        self._port = port

    @property
    def session_id(self) -> str:
        return self._state.session_id

    @property
    def protocol_version(self) -> str:
        return self._state.protocol_version or LATEST_HANDSHAKE

    @property
    def client_capabilities(self) -> Mapping[str, Any]:
        return self._state.client_capabilities

    @property
    def log_threshold(self) -> str | None:
        return self._state.log_level or LOG_LEVELS[0]  # until logging/setLevel, every level

    @property
    def lifespan_state(self) -> Any:
        return self._session.app.lifespan_state

    @property
    def app(self) -> Application:
        return self._session.app

    async def notify(self, method: str, params: dict[str, Any], request_id: RequestId | None) -> None:
        await self._session.notify(method, params, request_id)

    async def ask(self, method: str, params: dict[str, Any], *, request_id: RequestId | None, timeout: float,
                  key: str | None) -> Any:
        shaped = shape_client_request(method, params, self.protocol_version)
        try:
            return await self._port.request(method, shaped, timeout=timeout, related_to=request_id)
        except TimeoutError as exc:
            raise ToolError(str(exc)) from None
        except JSONRPCError as exc:
            raise ToolError(f"The client refused {method}: {exc.message}") from None

    async def list_roots(self, *, request_id: RequestId | None, key: str | None) -> list[Any]:
        return await self._session.list_roots()

    async def ping(self, *, request_id: RequestId | None, timeout: float) -> None:
        await self.ask("ping", {}, request_id=request_id, timeout=timeout, key=None)

    def missing_capability(self, capability: str, doing: str) -> Exception:
        return ToolError(
            f"This operation needs to {doing}, but the client did not declare the '{capability}' capability."
        )

    def was_cancelled(self, request_id: RequestId) -> bool:
        return self._port.was_cancelled(request_id)

    def close_stream(self, request_id: RequestId) -> bool:
        return self._port.close_stream(request_id)


# ---------------------------------------------------------------------- the handshake era's own methods


async def _ping(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    return {}


async def _subscribe(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    uri = uri_param(params)
    app = session.app
    if app.source is not None:  # a proxy: the server behind it keeps the subscription and tells us of updates
        result = await app.source.forward("resources/subscribe", params, ctx)
        session.state.subscriptions.add(uri)
        return result
    if app.mounts and has_sources(app) and app.resources.find(uri) is None:  # a mounted proxy's resource?
        found = await served_by_uri(app, "resources/subscribe", params, ctx)
        if found is not None:  # its upstream keeps the subscription and tells us of updates
            session.sourced_subscriptions[uri] = found[0]  # the proxy an unsubscription goes to
            session.state.subscriptions.add(uri)
            return found[1]
    await bind_resource(app.resources, uri, ctx)  # refused exactly as a read of it would be
    app.hub.subscribe(uri, session)  # -32602 past the subscription limits
    session.state.subscriptions.add(uri)
    await app.hub.ready([uri])  # answered once its watcher (if any) can see changes
    return {}


async def _unsubscribe(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    uri = uri_param(params)
    session.state.subscriptions.discard(uri)
    if session.app.source is not None:
        return await session.app.source.forward("resources/unsubscribe", params, ctx)
    session.app.hub.unsubscribe(uri, session)
    if session.app.mounts and has_sources(session.app) and session.app.resources.find(uri) is None:
        taken_by = session.sourced_subscriptions.pop(uri, None)  # a mounted proxy's resource: the one that took it
        await served_by_uri(session.app, "resources/unsubscribe", params, ctx, only=taken_by)
    return {}


async def _set_level(session: Session, params: dict[str, Any], ctx: Context) -> Any:
    level = params.get("level")
    if level not in LOG_LEVELS:
        raise invalid_params(f"Invalid log level {level!r}; expected one of {', '.join(LOG_LEVELS)}")
    session.state.log_level = level
    if session.app.source is not None:
        await session.app.source.forward("logging/setLevel", params, ctx)
    return {}


_SESSION_METHODS = {
    "ping": _ping,
    "resources/subscribe": _subscribe,
    "resources/unsubscribe": _unsubscribe,
    "logging/setLevel": _set_level,
}
