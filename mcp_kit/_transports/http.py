"""One Starlette app for every HTTP client generation: its assembly, and the `/mcp` endpoint that picks a shape.

- Streamable HTTP at `/mcp` in the handshake era (`http_streamable.py`): sessions by `Mcp-Session-Id`.
- The 2026-07-28 stateless shape on the same `/mcp` (`http_stateless.py`), chosen per request.
- Legacy HTTP+SSE (2024-11-05) at `/sse` and `/messages/` (`http_legacy.py`).
- `/healthz` (liveness) and `/readyz` (readiness) for load balancers; `/metrics` when asked for.
  Guards (Origin/Host, bearer token, body size and time) in front
  (`http_security.py`), and an OAuth 2.1 resource server when configured (`mcp_kit.auth`).

Below them: the session table (`http_sessions.py`), writer routing (`http_writer.py`), the
hand-written responses (`http_responses.py`), the resumable event store (`event_streams.py`),
reading requests (`http_common.py`) and the typed options (`http_options.py`). A POST's body is
read and decoded once, here, and handed to the shape that serves it.

The transport moves frames. It builds connections through a factory and needs from them only
what `connection.Connection` lists, so it never imports the session or server. It knows the few
MCP facts HTTP carries, from `_protocol/versions.py`: the protocol-version header and the stateless envelope.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse
from starlette.responses import Response as HTTPResponse
from starlette.routing import Route

from .._backends import Backend
from .._protocol.callers import record_client_address
from .._protocol.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, Request, decode_message
from .._protocol.versions import ALL_VERSIONS, STATELESS_VERSIONS, carries_envelope
from .connection import ConnectionFactory
from .http_admission import Admit
from .http_common import HEADERS_KEY, VERSION_HEADER, HTTPRequestLike, LeanRequest, accepts, read_message
from .http_legacy import LegacySSE
from .http_options import HttpOptions
from .http_responses import error_response
from .http_scopes import RequiredScopes
from .http_security import BodyTimeout, BodyTooLarge, SecurityMiddleware, SecurityPolicy
from .http_sessions import SessionTable
from .http_stateless import ParamHeaders, StatelessHTTP
from .http_streamable import StreamableHTTP

logger = logging.getLogger("mcp_kit.http")


class McpEndpoint:
    """`/mcp`: picks the shape of each exchange (stateless 2026-07-28 or a handshake-era session) and serves it."""

    def __init__(self, table: SessionTable, options: HttpOptions, param_headers: ParamHeaders | None,
                 required_scopes: RequiredScopes | None = None, admit: Admit | None = None) -> None:
        self.streamable = StreamableHTTP(table, options, required_scopes, admit)
        self.stateless = StatelessHTTP(table, param_headers, required_scopes, admit)

    async def __call__(self, request: HTTPRequestLike) -> HTTPResponse:
        started = time.perf_counter()
        record_client_address(request.scope)  # this request's context only (callers.py)
        try:
            response = await self._route(request)
        except BodyTooLarge as exc:
            response = error_response(413, INVALID_REQUEST, str(exc), {"Connection": "close"})
        except BodyTimeout as exc:
            response = error_response(408, INVALID_REQUEST, str(exc), {"Connection": "close"})
        if logger.isEnabledFor(logging.INFO):
            logger.info("%s /mcp %s %d %.1f ms", request.method, getattr(request.state, "rpc_method", "-"),
                        response.status_code, (time.perf_counter() - started) * 1000)
        return response

    async def _route(self, request: HTTPRequestLike) -> HTTPResponse:
        version = request.headers.get(VERSION_HEADER)
        if version in STATELESS_VERSIONS:  # versions.is_stateless / is_known, without a call: the hot path
            return await self.stateless.serve(request)
        if version is not None and version not in ALL_VERSIONS:
            if request.method == "POST":  # an unknown version: still the stateless shape when the body says so
                decoded = decode_message(await request.body())  # a body too large or too slow propagates: 413 / 408
                if isinstance(decoded, Request) and carries_envelope(decoded.params):
                    return await self.stateless.serve(request, decoded)
            return error_response(
                400,
                INVALID_REQUEST,
                f"Bad Request: unsupported MCP-Protocol-Version {version!r}; supported: {', '.join(ALL_VERSIONS)}",
            )
        if request.method == "POST":
            return await self._post(request)
        if request.method == "GET":
            return await self.streamable.get(request)
        if request.method == "DELETE":
            return await self.streamable.delete(request)
        return HTTPResponse(status_code=405, headers={"Allow": "GET, POST, DELETE"})

    async def _post(self, request: HTTPRequestLike) -> Any:
        if "application/json" not in request.headers.get("content-type", ""):  # http_common.is_json, inlined
            return error_response(415, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json")
        if not (accepts(request, "application/json") or accepts(request, "text/event-stream")):
            return error_response(406, INVALID_REQUEST, "Not Acceptable: accept application/json and text/event-stream")
        decoded = await read_message(request)
        if isinstance(decoded, HTTPResponse):
            return decoded
        if isinstance(decoded, Request) and carries_envelope(decoded.params):  # stateless, without the version header
            return await self.stateless.serve(request, decoded)
        return await self.streamable.post(request, decoded)


async def healthz(request: HTTPRequest) -> HTTPResponse:
    """Liveness for load balancers (no credentials needed)."""
    return JSONResponse({"status": "ok"})


def _metrics_endpoint(sink: Any) -> Callable[[HTTPRequest], Any]:
    async def metrics(request: HTTPRequest) -> HTTPResponse:
        return HTTPResponse(sink.scrape(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return metrics


class MCPHttpApp:
    """The ASGI entry point: every HTTP request passes one security guard; `/mcp` then goes straight to the
    endpoint, the rest (legacy SSE, `/healthz`) to Starlette.

    The MCP endpoint carries nearly all traffic; skipping the router and exception middleware
    for it saves a good part of each request's cost.
    """

    def __init__(
        self, starlette: Starlette, table: SessionTable, endpoint: McpEndpoint, policy: SecurityPolicy
    ) -> None:
        self.starlette = starlette
        self.session_table = table  # the connections the app serves (tests and operators look at them)
        self.endpoint = endpoint
        self.state = starlette.state
        self.readiness: Any = None  # what answers /readyz (`_telemetry/health.Readiness`), when one does
        self._guarded = SecurityMiddleware(self._by_path, policy)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await self._guarded(scope, receive, send)
        else:  # the lifespan
            await self.starlette(scope, receive, send)

    async def _by_path(self, scope: Any, receive: Any, send: Any) -> None:
        root = scope.get("root_path", "")
        path = scope["path"][len(root):] if root and scope["path"].startswith(root) else scope["path"]
        if path == "/mcp":
            await self._mcp(scope, receive, send)
        else:
            await self.starlette(scope, receive, send)

    async def _mcp(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            response = await self.endpoint(LeanRequest(scope, receive, scope.get(HEADERS_KEY)))
        except Exception:
            logger.exception("error while serving %s /mcp", scope.get("method"))
            response = error_response(500, INTERNAL_ERROR, "Internal error")
        await response(scope, receive, send)

    @property
    def router(self) -> Any:
        """The Starlette router (its `lifespan_context` runs the MCP app's lifespan when mounted)."""
        return self.starlette.router


def create_app(
    factory: ConnectionFactory,
    lifespan: Callable[[], contextlib.AbstractAsyncContextManager[Any]],
    options: HttpOptions | None = None,
    *,
    param_headers: ParamHeaders | None = None,
    required_scopes: RequiredScopes | None = None,
    backend: Backend | None = None,
    admit: Admit | None = None,
    readiness: Any = None,
    scrape: Any = None,
) -> Any:
    """The ASGI app: /mcp, /sse, /messages/, /healthz behind the security guard (and OAuth when `options.auth`).

    `factory` builds a connection (an MCP session) over its outbound port; `lifespan` is the
    application's; `param_headers` names the tool arguments mirrored in `Mcp-Param-*` headers;
    `required_scopes` the OAuth scopes of the tool, resource or prompt a request names (checked
    before dispatch when the caller came through the OAuth guard, `http_scopes.py`); `backend` holds
    what processes share (`mcp_kit._backends`; the caller starts and closes it); `admit` counts a lone
    request against the rate limits before dispatch (429 when over, `http_admission.py`).
    """
    options = options or HttpOptions()
    table = SessionTable(factory, options, backend)
    endpoint = McpEndpoint(table, options, param_headers, required_scopes, admit)
    legacy = LegacySSE(table)

    @contextlib.asynccontextmanager
    async def app_lifespan(app: Starlette) -> AsyncIterator[None]:
        async with lifespan(), table.running():
            yield

    routes = [
        Route("/sse", legacy.sse_endpoint, methods=["GET"]),
        Route("/messages/", legacy.messages_endpoint, methods=["POST"]),
        Route("/messages", legacy.messages_endpoint, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readiness.endpoint if readiness is not None else healthz, methods=["GET"]),
    ]
    if scrape is not None:
        routes.append(Route("/metrics", _metrics_endpoint(scrape), methods=["GET"]))
    starlette = Starlette(routes=routes, lifespan=app_lifespan)
    policy = SecurityPolicy.for_bind(options.host, options.port, allowed_origins=list(options.allowed_origins or ()),
                                     allowed_hosts=list(options.allowed_hosts or ()), auth_token=options.auth_token,
                                     max_body=options.max_body, body_timeout=options.body_timeout)
    app = MCPHttpApp(starlette, table, endpoint, policy)
    app.readiness = readiness
    if options.auth is None:
        return app
    from ..auth._facade_config import FacadeConfig

    if isinstance(options.auth, FacadeConfig):
        from .._backends import MemoryBackend
        from ..auth._facade import FacadeGuard

        return FacadeGuard(app, options.auth, backend if backend is not None else MemoryBackend())
    from ..auth._middleware import OAuthGuard

    return OAuthGuard(app, options.auth)
