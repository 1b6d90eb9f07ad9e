"""The 2026-07-28 (stateless) era: `server/discover`, the per-request `_meta` envelope,
`subscriptions/listen`, cache hints, and multi-round-trip tool calls.

A request belongs to this era when its `_meta` carries `io.modelcontextprotocol/protocolVersion`
(or it is `server/discover`). Such a request stands alone: its version, client capabilities and
log level come from its own envelope, never from the connection, so one stdio connection can mix
a handshake-era session and stateless requests, as migrating clients do.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import anyio

from .context import LOG_LEVELS, Context
from .errors import MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION, MCPError, ResourceNotFound, invalid_params
from .jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, Request, RequestId
from .mrtr import Rounds, answers_from
from .resources import bind_resource
from .versions import (
    CLIENT_CAPABILITIES_KEY,
    LATEST_STATELESS,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    STATELESS_VERSIONS,
    SUBSCRIPTION_ID_KEY,
)

if TYPE_CHECKING:
    from .session import Session

REMOVED_METHODS = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
CACHEABLE = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"})
FILTERS = {"toolsListChanged": "tools", "promptsListChanged": "prompts", "resourcesListChanged": "resources"}


def check_envelope(meta: Any) -> str:
    """The request's protocol version; -32602 for a malformed envelope, -32022 for an unknown version."""
    if not isinstance(meta, dict) or PROTOCOL_VERSION_KEY not in meta:
        raise invalid_params(f"_meta must carry '{PROTOCOL_VERSION_KEY}' (protocol 2026-07-28 requests are self-describing)")
    version = meta[PROTOCOL_VERSION_KEY]
    if version not in STATELESS_VERSIONS:
        raise MCPError(UNSUPPORTED_PROTOCOL_VERSION, f"Unsupported protocol version {version!r}",
                       {"supported": list(STATELESS_VERSIONS), "requested": str(version)})
    if not isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict):
        raise invalid_params(f"_meta must carry '{CLIENT_CAPABILITIES_KEY}' (an object; {{}} for none)")
    return str(version)


async def handle(session: Session, request: Request, params: dict[str, Any]) -> Any:
    """Serve one stateless-era request."""
    from .session import ROUTES

    meta = params.get("_meta")
    check_envelope(meta)
    method = request.method
    if method == "server/discover":
        return discover(session)
    if method in REMOVED_METHODS:
        raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method} does not exist in protocol 2026-07-28")
    if method == "subscriptions/listen":
        return await listen(session, request, params)
    route = ROUTES.get(method)
    if route is None:
        raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method}")
    if method in ("tools/call", "prompts/get", "resources/read"):
        result = await _with_rounds(session, request, params, route)
    else:
        result = await route(session, params, Context(session, request.id, meta))
    if "resultType" not in result:
        result["resultType"] = "complete"
    if method in CACHEABLE and result["resultType"] == "complete":
        result.setdefault("ttlMs", session.server.cache_ttl_ms)
        result.setdefault("cacheScope", session.server.cache_scope)
    return result


async def _with_rounds(session: Session, request: Request, params: dict[str, Any], route: Any) -> dict[str, Any]:
    target = params.get("name") or params.get("uri") or ""
    binding = f"{request.method}:{target}"
    rounds = Rounds(answers_from(params, binding))
    context = Context(session, request.id, params.get("_meta"), rounds)

    async def run() -> Any:
        try:
            return await route(session, params, context)
        except ResourceNotFound as exc:  # 2026-07-28: not found is invalid params
            raise MCPError(INVALID_PARAMS, exc.message, {"uri": exc.uri}) from None

    finished, result = await rounds.run(run)
    return result if finished else rounds.input_required(binding)


def discover(session: Session) -> dict[str, Any]:
    server = session.server
    result: dict[str, Any] = {
        "supportedVersions": list(STATELESS_VERSIONS),
        "capabilities": server.capabilities(LATEST_STATELESS),
        "serverInfo": server.info(LATEST_STATELESS),
        "_meta": {SERVER_INFO_KEY: server.info(LATEST_STATELESS)},
        "resultType": "complete",
        "ttlMs": server.cache_ttl_ms,
        "cacheScope": server.cache_scope,
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


def log_level(meta: dict[str, Any]) -> str | None:
    """The per-request log level; None means: send no log messages for this request."""
    level = meta.get(LOG_LEVEL_KEY)
    return level if level in LOG_LEVELS else None


def missing_capability(capability: str) -> MCPError:
    return MCPError(MISSING_CLIENT_CAPABILITY,
                    f"This request needs the client capability '{capability}'; declare it in _meta clientCapabilities",
                    {"requiredCapabilities": {capability: {}}})


# ---------------------------------------------------------------------- subscriptions/listen


class Listener:
    """One `subscriptions/listen` stream: resource updates and list changes the client opted in to."""

    def __init__(self, session: Session, request_id: RequestId, wanted: dict[str, Any]) -> None:
        self.session = session
        self.request_id = request_id
        self.kinds = {kind for key, kind in FILTERS.items() if wanted.get(key) is True}
        self.uris: list[str] = list(dict.fromkeys(wanted.get("resourceSubscriptions") or []))
        self.done = anyio.Event()

    def _post(self, method: str, params: dict[str, Any] | None = None) -> None:
        payload = dict(params or {})
        payload["_meta"] = {SUBSCRIPTION_ID_KEY: self.request_id}
        self.session.post_related(method, payload, self.request_id)

    def resource_updated(self, uri: str) -> None:
        self._post("notifications/resources/updated", {"uri": uri})

    def list_changed(self, kind: str) -> None:
        if kind in self.kinds:
            self._post(f"notifications/{kind}/list_changed")

    def close(self) -> None:
        self.done.set()


async def listen(session: Session, request: Request, params: dict[str, Any]) -> dict[str, Any]:
    """Acknowledge, then deliver until the client cancels or closes the stream."""
    wanted = params.get("notifications")
    if not isinstance(wanted, dict):
        raise invalid_params("subscriptions/listen needs 'notifications' (an object saying what to receive)")
    uris = wanted.get("resourceSubscriptions")
    if uris is not None and not (isinstance(uris, list) and all(isinstance(u, str) and u for u in uris)):
        raise invalid_params("'notifications.resourceSubscriptions' must be an array of resource URIs (strings)")
    server = session.server
    listener = Listener(session, request.id, wanted)
    caps = server.capabilities(LATEST_STATELESS)
    agreed: dict[str, Any] = {key: True for key, kind in FILTERS.items() if kind in listener.kinds and kind in caps}
    listener.kinds = {FILTERS[key] for key in agreed}
    if listener.uris and "resources" in caps:
        agreed["resourceSubscriptions"] = listener.uris
        await _check_subscribable(session, request, listener)
    else:
        listener.uris = []
    server.hub.subscribe_all(listener.uris, listener, owner=session)  # -32602 past the limits, nothing kept
    await server.hub.ready(listener.uris)
    await session.notify("notifications/subscriptions/acknowledged",
                         {"notifications": agreed, "_meta": {SUBSCRIPTION_ID_KEY: request.id}}, related_to=request.id)
    server.listeners.add(listener)
    try:
        await listener.done.wait()
    finally:
        server.listeners.discard(listener)
        server.hub.drop(listener)
    return {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: request.id}}


async def _check_subscribable(session: Session, request: Request, listener: Listener) -> None:
    """Refuse the stream when a URI would be refused on read (the same error a 2026-07-28 read gives)."""
    session.server.hub.check_room(listener, listener.uris, owner=session)  # before any validator runs
    context = Context(session, request.id, request.params.get("_meta") if request.params else None)
    for uri in listener.uris:
        try:
            await bind_resource(session.server.resources, uri, context)
        except ResourceNotFound as exc:
            raise MCPError(INVALID_PARAMS, exc.message, {"uri": exc.uri}) from None


def listeners_of(session: Session) -> Iterator[Listener]:
    return (listener for listener in list(session.server.listeners) if listener.session is session)
