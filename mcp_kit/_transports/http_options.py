"""`HttpOptions`: every knob of the HTTP app, typed, from the command line (`serve.add_run_arguments`) to
`create_app` and uvicorn.

`MCPServer.run(transport="http", **options)` and `MCPServer.asgi(**options)` take these fields as
keyword arguments; an unknown one is a TypeError naming it.

Must not import: session, server, or anything MCP; nor starlette (a stdio server builds no HTTP app,
and imports this module only to type its options).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from ..auth._config import AuthConfig
    from ..auth._facade_config import FacadeConfig
    from ..auth._validator import TokenValidator

    OAuth = Union[AuthConfig, TokenValidator, FacadeConfig]

DEFAULT_MAX_BODY = 16 << 20  # bytes of a request body (413 beyond)
DEFAULT_BODY_TIMEOUT = 30.0  # seconds a request body may take to arrive (408 beyond)


@dataclass(frozen=True)
class HttpOptions:
    """How the HTTP app serves, guards and bounds its endpoints."""

    host: str = "127.0.0.1"  # bind address; loopback also turns on the default Host/Origin allow-lists
    port: int = 8000
    auth_token: str | None = None  # one shared static bearer token...
    auth: OAuth | None = None  # ...or OAuth 2.1: a resource server (mcp_kit.auth.AuthConfig or TokenValidator), or
    # its clients' authorization server in front of an identity provider (mcp_kit.auth.FacadeConfig)
    allowed_origins: Sequence[str] = ()
    allowed_hosts: Sequence[str] = ()
    json_response: bool = False  # answer Streamable HTTP POSTs with JSON rather than an SSE stream
    max_sessions: int = 1000  # sessions of both HTTP transports plus 2026-07-28 requests in flight
    session_ttl: float = 3600.0  # seconds an idle Streamable HTTP session lives
    max_connections: int | None = 1000  # connections uvicorn serves at once (503 beyond); `run` only
    listen_fd: int | None = None  # serve on this inherited, already bound socket instead of host/port; `run` only
    max_body: int = DEFAULT_MAX_BODY
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    retry_ms: int = 1000  # the `retry` an SSE priming event tells clients to wait before resuming
    backend: str | None = (
        None  # where shared state lives: None/"memory" (this process) or a Redis URL (mcp_kit._backends)
    )
    workers: int = 1  # processes serving the same port (`run` only; needs a shared backend when > 1)
    shutdown_grace: int = (
        10  # whole seconds a stopping server waits for requests in flight, then cancels them; `run` only
    )
    metrics: bool = False  # GET /metrics: Prometheus metrics (needs mcp-kit-framework[otel]; mcp_kit._telemetry)
    metrics_port: int | None = None  # ...on this loopback port instead of the app's (0: a free one, logged)
    log_format: str = "text"  # stderr log lines: "text" or "json" (trace, span, session, subject); `run` only

    def __post_init__(self) -> None:
        if self.auth is not None and self.auth_token:
            raise ValueError("choose one: auth_token (one shared static token) or auth (OAuth 2.1)")
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        if self.workers > 1 and (not self.backend or self.backend.startswith("memory")):
            raise ValueError(f"--workers {self.workers} needs a shared backend (--backend redis://host:port/0 or "
                             "MCP_BACKEND): with the in-memory backend each process would have its own sessions, "
                             "and a client's next request, landing on another worker, would get 'session not found'")
