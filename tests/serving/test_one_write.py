"""uvicorn's protocol with one socket write per ready reply: the same bytes, in order, in fewer writes."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_kit._serving.one_write import OneWriteTransport, one_write_protocol

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n"


class Recorder:
    """A transport that records each write."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 1)}.get(name, default)


def test_a_head_and_the_body_after_it_leave_in_one_write() -> None:
    loop = asyncio.new_event_loop()
    try:
        inner = Recorder()
        transport = OneWriteTransport(inner, loop)
        transport.write(HEAD)
        assert inner.writes == [] and transport.get_write_buffer_size() == len(HEAD)
        transport.write(b"{}")
        transport.write(b"more")
        assert inner.writes == [HEAD + b"{}", b"more"]
        assert transport.get_extra_info("peername") == ("127.0.0.1", 1)  # the rest goes straight through
    finally:
        loop.close()


def test_a_head_alone_leaves_at_the_end_of_the_loop_turn_and_close_sends_what_is_held() -> None:
    loop = asyncio.new_event_loop()
    try:
        inner = Recorder()
        transport = OneWriteTransport(inner, loop)
        transport.write(HEAD)
        loop.run_until_complete(asyncio.sleep(0))
        assert inner.writes == [HEAD]
        transport.write(HEAD)
        transport.close()
        assert inner.writes == [HEAD, HEAD] and inner.closed
        loop.run_until_complete(asyncio.sleep(0))
        assert inner.writes == [HEAD, HEAD]  # sent once
        other = Recorder()
        dropped = OneWriteTransport(other, loop)
        dropped.write(HEAD)
        dropped.abort()
        loop.run_until_complete(asyncio.sleep(0))
        assert other.writes == [] and other.aborted
    finally:
        loop.close()


def test_what_is_not_a_response_head_is_never_held() -> None:
    loop = asyncio.new_event_loop()
    try:
        inner = Recorder()
        transport = OneWriteTransport(inner, loop)
        transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # the client waits for it before sending the body
        transport.write(b"5\r\nhello\r\n")
        transport.writelines([b"0\r\n", b"\r\n"])
        assert inner.writes == [b"HTTP/1.1 100 Continue\r\n\r\n", b"5\r\nhello\r\n", b"0\r\n\r\n"]
    finally:
        loop.close()


class _App:
    """A plain ASGI app: one JSON reply, or an SSE head whose first event comes a turn later."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/stream":
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")]})
            await asyncio.sleep(0.01)
            await send({"type": "http.response.body", "body": b"data: 1\n\n", "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"{}"})


@pytest.fixture
def served() -> Iterator[tuple[int, list[bytes]]]:
    """uvicorn with the one-write protocol on a free loopback port; yields the port and every write it made."""
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    writes: list[bytes] = []
    base = one_write_protocol(AutoHTTPProtocol)

    class Socket:
        """The real transport, each write recorded."""

        def __init__(self, transport: Any) -> None:
            self.transport = transport

        def write(self, data: bytes) -> None:
            writes.append(bytes(data))
            self.transport.write(data)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.transport, name)

    class Recording(base):  # type: ignore[valid-type, misc]
        def connection_made(self, transport: Any) -> None:
            super().connection_made(Socket(transport))

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(_App(), http=Recording, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        started = threading.Event()
        for _ in range(500):
            if server.started:
                started.set()
                break
            threading.Event().wait(0.01)
        assert started.is_set()
        yield sock.getsockname()[1], writes
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _exchange(port: int, path: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
        received = b""
        while chunk := client.recv(65536):
            received += chunk
        return received


def test_uvicorn_sends_a_ready_reply_in_one_write_and_a_stream_as_it_comes(served: tuple[int, list[bytes]]) -> None:
    port, writes = served
    reply = _exchange(port, "/json")
    assert reply.startswith(b"HTTP/1.1 200 OK\r\n") and reply.endswith(b"\r\n\r\n{}")
    assert writes == [reply]  # head and body together
    writes.clear()
    streamed = _exchange(port, "/stream")
    assert streamed.startswith(b"HTTP/1.1 200 OK\r\n") and b"transfer-encoding: chunked" in streamed
    assert streamed.endswith(b"9\r\ndata: 1\n\n\r\n0\r\n\r\n")
    assert len(writes) == 3 and writes[0].endswith(b"\r\n\r\n") and b"".join(writes) == streamed
