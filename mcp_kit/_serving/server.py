"""The application object users write against: `MCPServer`.

    app = MCPServer("demo")

    @app.tool
    def add(a: int, b: int) -> int:
        return a + b

    app.run()

`MCPServer` is an `Application` (`_app/application.py`: registries, capabilities, notifications,
lifespan) plus the ways to serve it: `run` (stdio, or HTTP with uvicorn), `run_from_args`
(the shared command-line options), `asgi` (the HTTP app to mount elsewhere). It never touches
bytes or streams itself; serving is `serve.py`'s and the transports' job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._app.application import Application
from .._transports.http_options import HttpOptions
from .serve import http_app, run, run_from_args, run_from_command_line

if TYPE_CHECKING:
    import argparse


class MCPServer(Application):
    """An MCP server: tools, resources, templates, prompts, completions, and how to run them."""

    @classmethod
    def proxy(cls, target: str | Sequence[str] | Mapping[str, Any], *, name: str = "mcp-kit-proxy",
              scope_map: Mapping[str, Sequence[str]] | None = None, timeout: float = 600.0,
              connect_timeout: float = 15.0, **options: Any) -> MCPServer:
        """A server whose tools, resources and prompts are those of the server(s) at `target`.

        `target`: a command line (a string or argv list: a stdio server), an http(s):// URL (Streamable
        HTTP, falling back to legacy SSE), or a client configuration (a `.json` path or a mapping with
        `mcpServers`) naming several servers, each then under its name as a namespace. `scope_map` gives
        proxied tools, prompts and resources OAuth scopes ({"write_*": ["files:write"]}, fnmatch on the
        names this proxy lists, before any transform or mount prefix, and on URIs). Other options are
        `MCPServer`'s (middleware, limits...). See `mcp_kit._proxy.source`.

        `transform_tool` and `hide_tools` (by name) reshape the upstream's tools as on any server, checked when
        the upstream lists them and at each call against its current schema; `other.mount(proxy, namespace=...)`
        serves it inside a plain server (`mcp_kit._app.sourced`).
        """
        from .._proxy.source import ProxySource
        from .._proxy.targets import parse_targets

        source = ProxySource(parse_targets(target), scope_map=scope_map, timeout=timeout,
                             connect_timeout=connect_timeout)
        app = cls(name, **options)
        app.source = source
        source.on_probed = lambda: _take_instructions(app, source)
        return app

    def run(self, transport: str | None = None, **options: Any) -> None:
        """Serve until the client goes away: `stdio` (default), `http` or `sse` (both on one HTTP app).

        Without arguments the command line and the MCP_* environment decide, with the options every
        mcp_kit server takes (`python server.py --transport http --port 8000`; `--help` lists them).
        HTTP options are the fields of `mcp_kit._transports.http_options.HttpOptions` (host, port,
        json_response, auth, ...); stdio takes `stdio_mode`. Both take `log_level`.
        """
        if transport is None and not options:
            run_from_command_line(self)
            return
        run(self, transport or "stdio", **options)

    def run_from_args(self, args: argparse.Namespace) -> None:
        """Serve with the options parsed by `add_run_arguments`."""
        run_from_args(self, args)

    def asgi(self, **options: Any) -> Any:
        """A Starlette app: Streamable HTTP at /mcp, legacy HTTP+SSE at /sse, /healthz.

        Options are the fields of `mcp_kit._transports.http_options.HttpOptions`: host (for the
        default Host/Origin allow-list), auth_token, allowed_origins, allowed_hosts, max_body,
        body_timeout, json_response, session_ttl, max_sessions, retry_ms, and `auth` (an
        `mcp_kit.auth.AuthConfig`: OAuth 2.1 resource server, see `mcp_kit.auth._middleware`). When
        mounting it in another Starlette app, run its lifespan
        (`lifespan=lambda a: mcp_app.router.lifespan_context(a)`).
        """
        return http_app(self, HttpOptions(**options))


def _take_instructions(app: MCPServer, source: Any) -> None:
    if app.instructions is None and source.instructions:
        app.instructions = source.instructions
