"""The stateless (2026-07-28) era: `server/discover`, the per-request `_meta` envelope,
`subscriptions/listen`, cache hints, and input rounds for questions to the client.

A request arrives here when the session decided it belongs to this era (its `_meta` carries
`io.modelcontextprotocol/protocolVersion`, or it is `server/discover`). Such a request stands
alone: its version, client capabilities and log level come from its own envelope, never from the
connection, so one stdio connection can mix a handshake-era session and stateless requests, as
migrating clients do. Its `StatelessChannel` answers the handler's `Context`.

A listen stream's `resourceSubscriptions` of a proxy are held by its source; on a plain server with a
proxy mounted in it, a URI the server does not serve itself is held by the first mounted proxy whose
source takes it (`sourced.watch_sourced`), the server's own as always.

Imports the application, the method table, the context, input rounds and the caller's identity
(`auth.principal`); never the session or a transport (the connection is reached through its
`OutboundPort`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

import anyio

from .._app.application import Application
from .._app.channel import LOG_LEVELS
from .._app.context import Context
from .._app.methods import CACHEABLE, INPUT_ROUND_METHODS, route_of
from .._app.pipeline import Call
from .._app.sourced import has_sources, watch_sourced
from .._app.state import NEW_HANDLE, STATE_HANDLE_KEY, HandleSlot
from .._primitives.resources import bind_resource
from .._protocol.errors import (
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    MCPError,
    ResourceNotFound,
    invalid_params,
)
from .._protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, Request, RequestId
from .._protocol.versions import (
    CLIENT_CAPABILITIES_KEY,
    DISCOVER_METHOD,
    HANDSHAKE_ONLY_METHODS,
    LATEST_STATELESS,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    STATELESS_VERSIONS,
    SUBSCRIPTION_ID_KEY,
)
from ..auth._principal import owner_key, session_owner
from .input_rounds import Rounds, answers_from, request_binding
from .port import OutboundPort

logger = logging.getLogger("mcp_kit.stateless")

LISTEN_METHOD = "subscriptions/listen"
FILTERS = {"toolsListChanged": "tools", "promptsListChanged": "prompts", "resourcesListChanged": "resources"}


def check_envelope(meta: Any) -> str:
    """The request's protocol version; -32602 for a malformed envelope, -32022 for an unknown version."""
    if not isinstance(meta, dict) or PROTOCOL_VERSION_KEY not in meta:
        raise invalid_params(
            f"_meta must carry '{PROTOCOL_VERSION_KEY}' (protocol 2026-07-28 requests are self-describing)"
        )
    version = meta[PROTOCOL_VERSION_KEY]
    if version not in STATELESS_VERSIONS:
        raise MCPError(UNSUPPORTED_PROTOCOL_VERSION, f"Unsupported protocol version {version!r}",
                       {"supported": list(STATELESS_VERSIONS), "requested": str(version)})
    if not isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict):
        raise invalid_params(f"_meta must carry '{CLIENT_CAPABILITIES_KEY}' (an object; {{}} for none)")
    return str(version)


class StatelessChannel:
    """The scope of one 2026-07-28 request: everything from its envelope; questions become an input round."""

    __slots__ = ("_app", "_port", "session_id", "protocol_version", "client_capabilities", "log_threshold", "_rounds")

    def __init__(self, app: Application, port: OutboundPort, session_id: str, version: str, meta: dict[str, Any],
                 rounds: Rounds | None) -> None:
        self._app = app
        self._port = port
        self.session_id = session_id
        self.protocol_version = version
        self.client_capabilities: Mapping[str, Any] = meta.get(CLIENT_CAPABILITIES_KEY) or {}
        level = meta.get(LOG_LEVEL_KEY)
        self.log_threshold = level if level in LOG_LEVELS else None  # no logLevel: no log messages
        self._rounds = rounds

    @property
    def lifespan_state(self) -> Any:
        return self._app.lifespan_state

    @property
    def app(self) -> Application:
        return self._app

    async def notify(self, method: str, params: dict[str, Any], request_id: RequestId | None) -> None:
        await self._port.notify(method, params, request_id)

    async def ask(self, method: str, params: dict[str, Any], *, request_id: RequestId | None, timeout: float,
                  key: str | None) -> Any:
        if self._rounds is None:
            raise MCPError(INTERNAL_ERROR, f"{method} cannot be asked while serving this request (protocol 2026-07-28 "
                                           "asks the client only from tools/call, prompts/get and resources/read)")
        return await self._rounds.ask(method, params, key)

    async def list_roots(self, *, request_id: RequestId | None, key: str | None) -> list[Any]:
        if "roots" not in self.client_capabilities or self._rounds is None:
            return []  # a request that cannot ask (subscriptions/listen) knows no roots
        result = await self.ask("roots/list", {}, request_id=request_id, timeout=0, key=key)
        from mcp_types import Root  # once answered: a first round ends in `ask`, without the protocol models

        return [Root.model_validate(root) for root in result.get("roots", [])]

    async def ping(self, *, request_id: RequestId | None, timeout: float) -> None:
        return None  # 2026-07-28 has no server-to-client ping

    def missing_capability(self, capability: str, doing: str) -> Exception:
        return MCPError(
            MISSING_CLIENT_CAPABILITY,
            f"This request needs the client capability '{capability}'; declare it in _meta clientCapabilities",
            {"requiredCapabilities": {capability: {}}},
        )

    def was_cancelled(self, request_id: RequestId) -> bool:
        return self._port.was_cancelled(request_id)

    def close_stream(self, request_id: RequestId) -> bool:
        return self._port.close_stream(request_id)


class StatelessRequests:
    """Serves the 2026-07-28 requests arriving on one connection, and the listen streams they hold open."""

    __slots__ = ("_app", "_port", "_owner", "_session_id", "_listeners")

    def __init__(self, app: Application, port: OutboundPort, owner: object, session_id: str) -> None:
        self._app = app
        self._port = port
        self._owner = owner  # whose subscription limits listen streams count against (the connection's session)
        self._session_id = session_id
        self._listeners: set[Listener] = set()

    async def serve(self, request: Request, params: dict[str, Any], principal: object | None) -> Any:
        """Serve one stateless-era request."""
        meta = params.get("_meta")
        version = check_envelope(meta)
        assert isinstance(meta, dict)
        method = request.method
        pipeline = self._app.pipeline
        if method == DISCOVER_METHOD:
            if pipeline is None:
                return discover(self._app)
            return await pipeline.handle(Call(method, params, Context(self._scope(version, meta, None), request.id,
                                                                      meta, principal), self._app, _answer=_discover))
        if method in HANDSHAKE_ONLY_METHODS:
            raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method} does not exist in protocol 2026-07-28")
        if method == LISTEN_METHOD:
            scope = self._scope(version, meta, None)
            if pipeline is None:
                return await self._listen(request, params, scope, principal)
            return await pipeline.handle(Call(method, params, Context(scope, request.id, meta, principal), self._app,
                                              _answer=lambda call: self._listen(request, call.params, scope,
                                                                                call.ctx.principal)))
        found = route_of(self._app, method)  # a core method's route, or an extension's
        if found is None:
            raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method}")
        route, endpoint = found
        slot = HandleSlot()  # a state handle made while serving goes back in the result's _meta
        reset = NEW_HANDLE.set(slot)
        try:
            if method in INPUT_ROUND_METHODS or method in self._app.extension_input_rounds:
                result = await self._with_rounds(request, params, version, meta, principal)
            elif pipeline is None:
                result = await route(self._app, params, Context(self._scope(version, meta, None), request.id, meta,
                                                                principal))
            else:
                result = await pipeline.handle(Call(method, params, Context(self._scope(version, meta, None),
                                                                            request.id, meta, principal), self._app,
                                                    _answer=endpoint))
        finally:
            NEW_HANDLE.reset(reset)
        if slot.handle is not None:
            result["_meta"] = {**(result.get("_meta") or {}), STATE_HANDLE_KEY: slot.handle}
        if "resultType" not in result:
            result["resultType"] = "complete"
        if (method in CACHEABLE or method in self._app.extension_cacheable) and result["resultType"] == "complete":
            result.setdefault("ttlMs", self._app.cache_ttl_ms)
            result.setdefault("cacheScope", self._app.cache_scope)
        return result

    def close(self) -> None:
        """The connection is gone: end its listen streams."""
        for listener in list(self._listeners):
            listener.close()

    def _scope(self, version: str, meta: dict[str, Any], rounds: Rounds | None) -> StatelessChannel:
        return StatelessChannel(self._app, self._port, self._session_id, version, meta, rounds)

    async def _with_rounds(self, request: Request, params: dict[str, Any], version: str, meta: dict[str, Any],
                           principal: object | None) -> dict[str, Any]:
        """A request whose handler may ask the client: each round (the first, and every retry carrying
        `inputResponses`) is one request through the middleware chain; its result may be `input_required`."""
        found = route_of(self._app, request.method)
        assert found is not None, "serve() found the route"
        route = found[0]
        binding = request_binding(request.method, params)  # the request state's bindings: input_rounds.py
        caller = owner_key(session_owner(principal))
        rounds = Rounds(answers_from(params, binding, caller))
        context = Context(self._scope(version, meta, rounds), request.id, meta, principal)
        app = self._app

        async def answer(params: dict[str, Any], context: Context) -> Any:
            async def run() -> Any:
                try:
                    return await route(app, params, context)
                except ResourceNotFound as exc:  # 2026-07-28: not found is invalid params
                    raise MCPError(INVALID_PARAMS, exc.message, {"uri": exc.uri}) from None

            finished, result = await rounds.run(run)
            return result if finished else rounds.input_required(binding, caller)

        pipeline = app.pipeline
        if pipeline is None:
            return await answer(params, context)  # type: ignore[no-any-return]
        return await pipeline.handle(Call(request.method, params, context, app,  # type: ignore[no-any-return]
                                          _answer=lambda call: answer(call.params, call.ctx)))

    # ------------------------------------------------------------------ subscriptions/listen

    async def _listen(self, request: Request, params: dict[str, Any], scope: StatelessChannel,
                      principal: object | None) -> dict[str, Any]:
        """Acknowledge, then deliver until the client cancels or closes the stream."""
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            raise invalid_params("subscriptions/listen needs 'notifications' (an object saying what to receive)")
        uris = wanted.get("resourceSubscriptions")
        if uris is not None and not (isinstance(uris, list) and all(isinstance(u, str) and u for u in uris)):
            raise invalid_params("'notifications.resourceSubscriptions' must be an array of resource URIs (strings)")
        app = self._app
        listener = Listener(self._port, request.id, wanted)
        caps = app.capabilities(LATEST_STATELESS)
        agreed: dict[str, Any] = {key: True for key, kind in FILTERS.items() if kind in listener.kinds and kind in caps}
        listener.kinds = {FILTERS[key] for key in agreed}
        context = Context(scope, request.id, params.get("_meta"), principal)
        sourced: list[str] = []  # URIs of a mounted proxy's resources: held by its source while the stream is open
        if listener.uris and "resources" in caps:
            agreed["resourceSubscriptions"] = listener.uris
            app.hub.check_room(listener, listener.uris, owner=self._owner)  # before any validator runs
            if app.source is None and app.mounts and has_sources(app):
                sourced = [uri for uri in listener.uris  # the server's own and its extensions' stay here
                           if app.resources.find(uri) is None and not app.extension_reads(uri)]
            for uri in listener.uris if app.source is None else ():  # a proxy's upstream refuses its own
                if uri in sourced:
                    continue
                try:  # refused as a read of it would be (the error a 2026-07-28 read gives)
                    await bind_resource(app.resources, uri, context)
                except ResourceNotFound as exc:
                    raise MCPError(INVALID_PARAMS, exc.message, {"uri": exc.uri}) from None
        else:
            listener.uris = []
        app.hub.subscribe_all(listener.uris, listener, owner=self._owner)  # -32602 past the limits, nothing kept
        try:
            async with contextlib.AsyncExitStack() as held:
                if app.source is not None:  # a proxy: the servers behind it tell of updates and list changes
                    await held.enter_async_context(app.source.watching(listener.uris, listener, context))
                for uri in sourced:  # a mounted proxy's resource: the first proxy that has it holds it upstream
                    await watch_sourced(held, app, uri, listener, context)
                await app.hub.ready(listener.uris)
                await self._port.notify("notifications/subscriptions/acknowledged",
                                        {"notifications": agreed, "_meta": {SUBSCRIPTION_ID_KEY: request.id}},
                                        related_to=request.id)
                app.listeners.add(listener)
                self._listeners.add(listener)
                await listener.done.wait()
        finally:
            self._listeners.discard(listener)
            app.listeners.discard(listener)
            app.hub.drop(listener)
        return {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: request.id}}


async def _discover(call: Call) -> dict[str, Any]:
    return discover(call.app)


def discover(app: Application) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": list(STATELESS_VERSIONS),
        "capabilities": app.capabilities(LATEST_STATELESS),
        "serverInfo": app.info(LATEST_STATELESS),
        "_meta": {SERVER_INFO_KEY: app.info(LATEST_STATELESS)},
        "resultType": "complete",
        "ttlMs": app.cache_ttl_ms,
        "cacheScope": app.cache_scope,
    }
    if app.instructions:
        result["instructions"] = app.instructions
    return result


class Listener:
    """One `subscriptions/listen` stream: resource updates and list changes the client opted in to."""

    def __init__(self, port: OutboundPort, request_id: RequestId, wanted: dict[str, Any]) -> None:
        self._port = port
        self.request_id = request_id
        self.kinds = {kind for key, kind in FILTERS.items() if wanted.get(key) is True}
        self.uris: list[str] = list(dict.fromkeys(wanted.get("resourceSubscriptions") or []))
        self.done = anyio.Event()

    def _post(self, method: str, params: dict[str, Any] | None = None) -> None:
        payload = dict(params or {})
        payload["_meta"] = {SUBSCRIPTION_ID_KEY: self.request_id}
        self._port.post(method, payload, self.request_id)

    def resource_updated(self, uri: str) -> None:
        self._post("notifications/resources/updated", {"uri": uri})

    async def deliver_update(self, uri: str) -> None:
        """`resource_updated`, awaited (the hub's delivery task calls it: no task per subscriber)."""
        try:
            await self._port.notify("notifications/resources/updated",
                                    {"uri": uri, "_meta": {SUBSCRIPTION_ID_KEY: self.request_id}}, self.request_id)
        except Exception as exc:
            logger.error("could not send notifications/resources/updated: %s", exc)

    def list_changed(self, kind: str) -> None:
        if kind in self.kinds:
            self._post(f"notifications/{kind}/list_changed")

    def close(self) -> None:
        self.done.set()
