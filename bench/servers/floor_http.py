"""HTTP side of the floor reference: Streamable HTTP POSTs answered from a bare asyncio protocol.

No validation beyond what parsing needs, JSON or single-event SSE bodies, a fresh session id per
`initialize`. It shows the ceiling the harness's HTTP client can measure on this machine, not a usable
server. For the fan-out curve it also keeps the least state subscriptions need: GET /mcp event streams
per session, `resources/subscribe` and `subscriptions/listen` streams, and `tools/call bump` writes one
pre-encoded `notifications/resources/updated` event to each subscriber before answering.
"""

from __future__ import annotations

import asyncio
import json
import uuid

from floor_echo import answer

UPDATED_EVENT = (
    b'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/resources/updated",'
    b'"params":{"uri":"bench://counter"}}\r\n\r\n'
)
STREAM_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n"


class Subscriptions:
    """GET streams by session id, and every stream to notify when `bump` is called."""

    streams: dict[str, asyncio.BaseTransport] = {}
    subscribers: list[asyncio.BaseTransport] = []


class FloorHttp(asyncio.Protocol):
    """Bare HTTP/1.1 keep-alive handler for POST/GET/DELETE /mcp (no validation beyond what parsing needs)."""

    json_response = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.buffer = b""
        self.streaming = False

    def data_received(self, data: bytes) -> None:
        if self.streaming:
            return
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buffer[:head_end].decode("latin-1").split("\r\n")
            headers = {
                k.strip().lower(): v.strip()
                for k, _, v in (line.partition(":") for line in head[1:])
            }
            length = int(headers.get("content-length", "0"))
            if len(self.buffer) < head_end + 4 + length:
                return
            body = self.buffer[head_end + 4 : head_end + 4 + length]
            self.buffer = self.buffer[head_end + 4 + length :]
            self.respond(head[0].split(" ")[0], headers, body)

    def respond(self, method: str, headers: dict[str, str], body: bytes) -> None:
        session_id = headers.get("mcp-session-id", "")
        if method == "DELETE":
            self.send(200, "text/plain", b"", session_id)
            return
        if method == "GET":  # the session's event stream: kept open, written to by `bump`
            self.transport.write(STREAM_HEAD)  # type: ignore[attr-defined]
            Subscriptions.streams[session_id] = self.transport
            self.streaming = True
            return
        message = json.loads(body)
        name = message.get("method")
        if name == "initialize":
            session_id = uuid.uuid4().hex
        elif name == "resources/subscribe" and session_id in Subscriptions.streams:
            Subscriptions.subscribers.append(Subscriptions.streams[session_id])
        elif name == "subscriptions/listen":
            acknowledged = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                            "params": {"notifications": message["params"]["notifications"]}}
            self.transport.write(  # type: ignore[attr-defined]
                STREAM_HEAD + b"event: message\r\ndata: " + json.dumps(acknowledged).encode() + b"\r\n\r\n"
            )
            Subscriptions.subscribers.append(self.transport)
            self.streaming = True
            return
        elif name == "tools/call" and message["params"].get("name") == "bump":
            for stream in Subscriptions.subscribers:
                stream.write(UPDATED_EVENT)  # type: ignore[attr-defined]
            message = {"jsonrpc": "2.0", "id": message["id"], "method": "tools/call",
                       "params": {"name": "echo", "arguments": {"text": "ok"}}}
        reply = answer(message)
        if reply is None:
            self.send(202, "text/plain", b"", session_id)
            return
        payload = json.dumps(reply, separators=(",", ":")).encode()
        if self.json_response:
            self.send(200, "application/json", payload, session_id)
        else:
            self.send(
                200,
                "text/event-stream",
                b"event: message\r\ndata: " + payload + b"\r\n\r\n",
                session_id,
            )

    def send(self, status: int, content_type: str, body: bytes, session_id: str) -> None:
        reason = {200: "OK", 202: "Accepted"}[status]
        self.transport.write(  # type: ignore[attr-defined]
            f"HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
            f"mcp-session-id: {session_id}\r\n\r\n".encode()
            + body
        )

    def connection_lost(self, exc: Exception | None) -> None:
        if self.streaming:
            Subscriptions.subscribers[:] = [s for s in Subscriptions.subscribers if s is not self.transport]
            for key, stream in list(Subscriptions.streams.items()):
                if stream is self.transport:
                    del Subscriptions.streams[key]


async def _serve_forever(host: str, port: int) -> None:
    server = await asyncio.get_running_loop().create_server(FloorHttp, host, port)
    async with server:
        await server.serve_forever()


def serve(host: str, port: int, json_response: bool) -> None:
    """Serve HTTP until killed."""
    FloorHttp.json_response = json_response
    asyncio.run(_serve_forever(host, port))
