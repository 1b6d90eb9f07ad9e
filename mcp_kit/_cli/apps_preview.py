"""`mcp-kit apps preview SERVER`: a local page that renders a server's MCP Apps views as a host would.

The server is loaded in this process and connected in memory as a host that declares the Apps extension
(`io.modelcontextprotocol/ui`). Two loopback listeners serve one small ASGI app: the host page on the
first (`/`, and `/rpc`, which relays `{method, params}` to the server for that page only), the sandbox
proxy on the second (`/sandbox`), so the proxy has another origin than the host, as the Apps
specification requires of web hosts. The host side is written here (`preview/host.html`) rather than
taken from `@modelcontextprotocol/ext-apps`: its `app-bridge` build imports `@modelcontextprotocol/client`,
`@modelcontextprotocol/core` and `zod` by bare name and has no bundled variant, so a plain page cannot
load it without a bundler.

Imports the loader, `mcp_kit.testing` and `mcp_kit.apps`; starlette and uvicorn (mcp_kit's own dependencies).
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from .._protocol.errors import MCPError

PAGES = Path(__file__).resolve().parent / "preview"
HOST_PAGE = PAGES / "host.html"
SANDBOX_PAGE = PAGES / "sandbox.html"
MAX_BODY = 1 << 20


def _listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    sock.setblocking(False)
    return sock


def preview_app(client: Any, name: str, host_origin: str, sandbox_origin: str) -> Any:
    """The ASGI app of both listeners: the host page and `/rpc` on `host_origin`, the proxy on `sandbox_origin`."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    page = HOST_PAGE.read_text(encoding="utf-8").replace("__SANDBOX_URL__", sandbox_origin)
    proxy = SANDBOX_PAGE.read_text(encoding="utf-8")

    def origin_of(request: Request) -> str:
        return f"http://{request.headers.get('host', '')}"

    async def home(request: Request) -> Response:
        if origin_of(request) != host_origin:
            return Response("the host page is served on " + host_origin, status_code=404)
        return HTMLResponse(page, headers={
            "Content-Security-Policy": f"default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                                       f"frame-src {sandbox_origin}; object-src 'none'; base-uri 'none'",
            "Cache-Control": "no-store"})

    async def sandbox(request: Request) -> Response:
        if origin_of(request) != sandbox_origin:
            return Response("the sandbox proxy is served on " + sandbox_origin, status_code=404)
        return HTMLResponse(proxy, headers={"Content-Security-Policy": f"frame-ancestors {host_origin}",
                                            "Cache-Control": "no-store"})

    async def info(request: Request) -> Response:
        if origin_of(request) != host_origin:
            return Response(status_code=404)
        return JSONResponse({"name": name})

    async def rpc(request: Request) -> Response:
        # only the host page may talk to the server: same Host, same Origin (no DNS rebinding, no other page)
        if origin_of(request) != host_origin or request.headers.get("origin") != host_origin:
            return JSONResponse({"error": {"code": -32600, "message": "not the preview page"}}, status_code=403)
        body = await request.body()
        if len(body) > MAX_BODY:
            return JSONResponse({"error": {"code": -32600, "message": "request too large"}}, status_code=413)
        try:
            message = json.loads(body)
            method, params = message["method"], message.get("params") or {}
            if not isinstance(method, str) or not isinstance(params, dict):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": {"code": -32600, "message": "expected {method, params}"}}, status_code=400)
        try:
            return JSONResponse({"result": await client.request(method, params)})
        except MCPError as exc:
            return JSONResponse({"error": {"code": exc.code, "message": exc.message, "data": exc.data}})

    return Starlette(routes=[Route("/", home), Route("/sandbox", sandbox), Route("/info", info),
                             Route("/rpc", rpc, methods=["POST"])])


async def serve_preview(server: Any, host: str = "127.0.0.1", port: int = 0, sandbox_port: int = 0,
                        announce: Callable[[str], None] | None = None) -> None:
    """Serve the preview of `server`'s views until cancelled (Ctrl+C from the command)."""
    import uvicorn

    from ..apps import EXTENSION_ID, MIME_TYPE
    from ..testing import connect

    page_socket = _listen(host, port)
    sandbox_socket = _listen(host, sandbox_port)
    host_origin = f"http://{host}:{page_socket.getsockname()[1]}"
    sandbox_origin = f"http://{host}:{sandbox_socket.getsockname()[1]}"
    try:
        async with connect(server, extensions={EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}) as client:
            app = preview_app(client, server.name, host_origin, sandbox_origin)
            config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
            runner = uvicorn.Server(config)
            if announce is not None:
                announce(f"Preview of {server.name}'s views: {host_origin}/ (sandbox proxy on {sandbox_origin})")
            await runner.serve(sockets=[page_socket, sandbox_socket])
    finally:
        page_socket.close()
        sandbox_socket.close()


def preview_command(spec: str, host: str, port: int, sandbox_port: int) -> int:
    """`mcp-kit apps preview`: load the server, print the page's address, serve until interrupted."""
    from .loader import load_server

    if host not in ("127.0.0.1", "localhost"):
        raise ValueError("the preview serves on loopback only (--host 127.0.0.1)")
    server = load_server(spec)

    def announce(line: str) -> None:
        print(line, flush=True)  # stdout-ok: the CLI's own output

    try:
        anyio.run(serve_preview, server, "127.0.0.1" if host == "localhost" else host, port, sandbox_port, announce)
    except KeyboardInterrupt:
        pass
    sys.stdout.flush()
    return 0
