"""A minimal asyncio HTTP/1.1 client for MCP Streamable HTTP (keep-alive, JSON or SSE response bodies).

Written on raw asyncio streams rather than an HTTP library to keep the client's own cost per call small.
Time bounds are enforced by the caller aborting the connection (see `HttpConnection.abort`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from . import codec

PROTOCOL_VERSION = "2025-11-25"
MCP_PATH = "/mcp"


class HttpProtocolError(RuntimeError):
    """The server's HTTP answer was not what Streamable HTTP allows."""


@dataclass
class HttpReply:
    """One HTTP response with the JSON-RPC messages carried in its body."""

    status: int
    headers: dict[str, str]
    messages: list[dict[str, Any]] = field(default_factory=list)
    payload_bytes: int = 0  # bytes of the JSON-RPC messages in the body (SSE `data:` payloads)
    wire_bytes: int = 0  # the whole response as read: status line, headers, body with its framing

    @property
    def content_type(self) -> str:
        """Media type of the body without parameters."""
        return self.headers.get("content-type", "").split(";")[0].strip()


def parse_sse(body: bytes) -> list[dict[str, Any]]:
    """JSON-RPC messages in the `data:` fields of an SSE body (events without data are skipped)."""
    return parse_sse_sized(body)[0]


def parse_sse_sized(body: bytes) -> tuple[list[dict[str, Any]], int]:
    """`parse_sse` plus the bytes of the JSON payloads it decoded."""
    messages: list[dict[str, Any]] = []
    size = 0
    for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = [
            line[5:].lstrip(b" ") if line.startswith(b"data:") else None
            for line in event.split(b"\n")
        ]
        payload = b"\n".join(part for part in data if part is not None)
        if payload.strip():
            decoded = codec.loads(payload)
            messages.extend(decoded if isinstance(decoded, list) else [decoded])
            size += len(payload)
    return messages, size


class HttpConnection:
    """One keep-alive connection to 127.0.0.1:port carrying one MCP session."""

    def __init__(self, port: int, protocol_version: str | None = None) -> None:
        self.port = port
        self.session_id: str | None = None
        # Sent on every request when set (the 2026-07-28 era has no session to carry it).
        self.protocol_version = protocol_version
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._host_header = f"127.0.0.1:{port}".encode()

    async def open(self) -> None:
        """Connect (TCP_NODELAY is asyncio's default)."""
        self._reader, self._writer = await asyncio.open_connection(
            "127.0.0.1", self.port, limit=1 << 24
        )

    async def reopen_if_closed(self) -> None:
        """Reconnect (same MCP session) when the server closed the idle keep-alive connection.

        uvicorn closes keep-alive connections idle for more than 5 s; in a full run the
        connections reserved for the higher concurrency levels sit idle that long.
        """
        if self._reader is None or self._reader.at_eof() or self._writer is None or self._writer.is_closing():
            await self.close()
            await self.open()

    def abort(self) -> None:
        """Drop the connection at once (used to enforce time limits)."""
        if self._writer is not None:
            self._writer.transport.abort()

    async def close(self) -> None:
        """Close the connection."""
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except (ConnectionError, OSError):
                pass
            self._writer = None

    def _request_head(self, method: bytes, length: int, extra: bytes = b"") -> bytes:
        lines = [
            method + b" " + MCP_PATH.encode() + b" HTTP/1.1",
            b"Host: " + self._host_header,
            b"Accept: application/json, text/event-stream",
        ]
        if length:
            lines.append(b"Content-Type: application/json")
        lines.append(b"Content-Length: " + str(length).encode())
        if self.session_id is not None:
            lines.append(b"Mcp-Session-Id: " + self.session_id.encode())
        if self.session_id is not None or self.protocol_version is not None:
            lines.append(b"MCP-Protocol-Version: " + (self.protocol_version or PROTOCOL_VERSION).encode())
        return b"\r\n".join(lines) + b"\r\n" + extra + b"\r\n"

    async def post(self, body: bytes, extra_headers: bytes = b"") -> HttpReply:
        """POST one JSON-RPC message and read the whole response (`extra_headers`: CRLF-terminated lines)."""
        assert self._writer is not None
        self._writer.write(self._request_head(b"POST", len(body), extra_headers) + body)
        return await self._read_reply()

    async def delete_session(self) -> int:
        """DELETE the session (best effort); returns the status."""
        assert self._writer is not None
        self._writer.write(self._request_head(b"DELETE", 0))
        return (await self._read_reply()).status

    async def _read_reply(self) -> HttpReply:
        assert self._reader is not None
        head = await self._reader.readuntil(b"\r\n\r\n")
        status_line, _, header_block = head.partition(b"\r\n")
        status = int(status_line.split(b" ", 2)[1])
        headers: dict[str, str] = {}
        for line in header_block.split(b"\r\n"):
            name, sep, value = line.partition(b":")
            if sep:
                headers[name.strip().lower().decode()] = value.strip().decode()
        body, framing = await self._read_body(headers)
        reply = HttpReply(status, headers, wire_bytes=len(head) + len(body) + framing)
        if body:
            if reply.content_type == "text/event-stream":
                reply.messages, reply.payload_bytes = parse_sse_sized(body)
            elif reply.content_type == "application/json":
                decoded = codec.loads(body)
                reply.messages = decoded if isinstance(decoded, list) else [decoded]
                reply.payload_bytes = len(body)
        return reply

    async def _read_body(self, headers: dict[str, str]) -> tuple[bytes, int]:
        """The body, and the bytes of its transfer framing (chunk sizes, trailers)."""
        assert self._reader is not None
        if "chunked" in headers.get("transfer-encoding", "").lower():
            parts: list[bytes] = []
            framing = 0
            while True:
                size_line = await self._reader.readuntil(b"\r\n")
                framing += len(size_line)
                size = int(size_line.split(b";")[0].strip(), 16)
                if size == 0:
                    while (line := await self._reader.readuntil(b"\r\n")) != b"\r\n":
                        framing += len(line)  # trailers
                    return b"".join(parts), framing + 2
                parts.append(await self._reader.readexactly(size))
                await self._reader.readexactly(2)
                framing += 2
        if "content-length" in headers:
            return await self._reader.readexactly(int(headers["content-length"])), 0
        if headers.get("connection", "").lower() == "close":
            return await self._reader.read(), 0
        return b"", 0

    async def initialize(self) -> dict[str, Any]:
        """Open a session: initialize (keeping Mcp-Session-Id) then notifications/initialized."""
        reply = await self.post(
            codec.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": PROTOCOL_VERSION,
                        "capabilities": {},
                        "clientInfo": {"name": "mcp-bench", "version": "1"},
                    },
                }
            )
        )
        if (
            reply.status != 200
            or not reply.messages
            or "result" not in reply.messages[-1]
        ):
            raise HttpProtocolError(
                f"initialize failed: HTTP {reply.status} {reply.messages!r}"
            )
        self.session_id = reply.headers.get("mcp-session-id")
        note = await self.post(
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        )
        if note.status not in (200, 202, 204):
            raise HttpProtocolError(
                f"notifications/initialized answered HTTP {note.status}"
            )
        return reply.messages[-1]["result"]


def response_for(reply: HttpReply, request_id: int) -> dict[str, Any]:
    """The JSON-RPC response with `request_id` in `reply` (raises if absent or an error)."""
    if reply.status != 200:
        raise HttpProtocolError(f"HTTP {reply.status} for request {request_id}")
    for message in reply.messages:
        if message.get("id") == request_id and "method" not in message:
            if "error" in message:
                raise HttpProtocolError(f"error response: {message['error']}")
            return message
    raise HttpProtocolError(
        f"no response to request {request_id} in {reply.content_type} body"
    )
