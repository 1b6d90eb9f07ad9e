"""HTTP side of the floor reference: Streamable HTTP POSTs answered from a bare asyncio protocol.

One fixed session id, no validation beyond what parsing needs, JSON or single-event SSE bodies.
It shows the ceiling the harness's HTTP client can measure on this machine, not a usable server.
"""

from __future__ import annotations

import asyncio
import json
import uuid

from floor_echo import answer


class FloorHttp(asyncio.Protocol):
    """Bare HTTP/1.1 keep-alive handler for POST/DELETE /mcp (no validation beyond what parsing needs)."""

    session_id = uuid.uuid4().hex
    json_response = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
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
            self.respond(head[0].split(" ")[0], body)

    def respond(self, method: str, body: bytes) -> None:
        if method == "DELETE":
            self.send(200, "text/plain", b"")
            return
        reply = answer(json.loads(body))
        if reply is None:
            self.send(202, "text/plain", b"")
            return
        payload = json.dumps(reply, separators=(",", ":")).encode()
        if self.json_response:
            self.send(200, "application/json", payload)
        else:
            self.send(
                200,
                "text/event-stream",
                b"event: message\r\ndata: " + payload + b"\r\n\r\n",
            )

    def send(self, status: int, content_type: str, body: bytes) -> None:
        reason = {200: "OK", 202: "Accepted"}[status]
        self.transport.write(
            f"HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
            f"mcp-session-id: {self.session_id}\r\n\r\n".encode()
            + body
        )


async def _serve_forever(host: str, port: int) -> None:
    server = await asyncio.get_running_loop().create_server(FloorHttp, host, port)
    async with server:
        await server.serve_forever()


def serve(host: str, port: int, json_response: bool) -> None:
    """Serve HTTP until killed."""
    FloorHttp.json_response = json_response
    asyncio.run(_serve_forever(host, port))
