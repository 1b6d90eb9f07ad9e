"""The scrape endpoint on a loopback port of its own (`--metrics-port`): how a stdio server is scraped, and an
HTTP server whose `/metrics` should not share the public port.

A small asyncio HTTP/1.1 server (no new dependency, no signal handlers of its own, so a stdio server's
shutdown is unchanged): `GET /metrics` only, one request per connection, behind the same checks as the
HTTP app's guard (`http_security.SecurityPolicy` for a loopback bind: loopback Host and Origin only, and
the bearer token when one is set). Request heads are bounded in size and time.

Imports the HTTP guard's policy and the Prometheus sink's type.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from .._transports.http_security import SecurityPolicy
from .prometheus import CONTENT_TYPE

logger = logging.getLogger("mcp_kit.telemetry")
MAX_HEAD = 16 * 1024
HEAD_TIMEOUT = 5.0


class MetricsPort:
    """Serves `sink.scrape()` at `http://host:port/metrics`; `port` 0 picks a free one (see `.port`)."""

    def __init__(self, sink: Any, host: str = "127.0.0.1", port: int = 9464, auth_token: str | None = None) -> None:
        self.sink = sink
        self.host = host
        self.requested_port = port
        self.policy = SecurityPolicy.for_bind(host, port, auth_token=auth_token)
        self.port: int | None = None
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.requested_port)
        self.port = self._server.sockets[0].getsockname()[1]
        logger.info("serving metrics on http://%s:%d/metrics", self.host, self.port)

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            status, body, content_type = await asyncio.wait_for(self._answer(reader), HEAD_TIMEOUT)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            status, body, content_type = 400, b"bad request\n", "text/plain"
        try:
            writer.write(f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\nContent-Type: {content_type}\r\n"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def _answer(self, reader: asyncio.StreamReader) -> tuple[int, bytes, str]:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEAD:
            return 431, b"request head too large\n", "text/plain"
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            return 400, b"bad request\n", "text/plain"
        method, target, _ = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        policy = self.policy
        if not policy.host_allowed(headers.get("host")) or not policy.origin_allowed(headers.get("origin")):
            return 403, b"forbidden: Host or Origin not allowed\n", "text/plain"
        if not policy.token_ok(headers.get("authorization")):
            return 401, b"unauthorized\n", "text/plain"
        if target.split("?", 1)[0] != "/metrics":
            return 404, b"not found: the metrics are at /metrics\n", "text/plain"
        if method != "GET":
            return 405, b"method not allowed\n", "text/plain"
        return 200, self.sink.scrape(), CONTENT_TYPE  # on the loop: the readings see a consistent state


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            405: "Method Not Allowed", 431: "Request Header Fields Too Large"}
