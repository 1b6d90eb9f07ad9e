"""What a slow or malformed HTTP client can hold is bounded.

- A body still incomplete `--body-timeout` seconds after the app began reading it gets 408 and the
  connection is closed (its file descriptor released); before, 1000 trickling connections were all held.
- `--max-connections` caps the connections uvicorn serves (503 beyond: its `limit_concurrency`).
- While the Host allow-list is active, a request without `Host`, with several, or with one that is not
  `name[:port]` (`127.0.0.1:1@evil.example`) is refused; before, the first two passed unchecked and the
  last was read as `127.0.0.1`.
Slow headers are not bounded by uvicorn: the README says to deploy behind a proxy that times them out.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from tests.helpers.fault_server import build
from tests.helpers.live_http import ACCEPT, LiveServer, open_fds, serve, server_process, until

INIT = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')


@pytest.fixture
async def live() -> AsyncIterator[LiveServer]:
    async with serve(build(), body_timeout=0.5) as server:
        yield server


async def exchange(live: LiveServer, head: bytes, body: bytes = b"", trickle: bytes = b"") -> bytes:
    """Send a raw request (`trickle` one byte at a time, 50 ms apart) and read until the server closes."""
    async with await anyio.connect_tcp("127.0.0.1", live.port) as stream:
        await stream.send(head + body)
        received = b""
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:

                async def drip() -> None:
                    for byte in trickle:
                        await anyio.sleep(0.05)
                        try:
                            await stream.send(bytes([byte]))
                        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                            return

                tg.start_soon(drip)
                while True:
                    try:
                        chunk = await stream.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
                        break
                    received += chunk
                tg.cancel_scope.cancel()
        return received


def post_head(live: LiveServer, path: str = "/mcp", length: int = 1000, host: bytes | None = b"") -> bytes:
    host_line = b"" if host is None else b"Host: " + (host or f"127.0.0.1:{live.port}".encode()) + b"\r\n"
    return (f"POST {path} HTTP/1.1\r\n".encode() + host_line +
            b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
            f"Content-Length: {length}\r\n\r\n".encode())


@pytest.mark.anyio
async def test_a_stalled_body_gets_408_and_its_connection_is_closed(live: LiveServer) -> None:
    baseline = open_fds()
    reply = await exchange(live, post_head(live), b'{"jsonrpc":"2.0"')  # 16 of 1000 bytes, then silence
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    assert b"did not arrive within 0.5 s" in reply and b"connection: close" in reply.lower()
    await until(lambda: open_fds() <= baseline, "the connection's descriptor to be released")


@pytest.mark.anyio
async def test_a_stalled_body_to_a_legacy_session_gets_408(live: LiveServer) -> None:
    async with httpx.AsyncClient(timeout=10) as client, client.stream("GET", f"{live.base}/sse") as events:
        endpoint = None
        async for line in events.aiter_lines():
            if line.startswith("data:"):
                endpoint = line[5:].strip()
                break
        assert endpoint is not None
        reply = await exchange(live, post_head(live, endpoint), b'{"jsonrpc":')
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]


@pytest.mark.anyio
async def test_an_early_error_closes_the_connection_instead_of_waiting_for_the_body(live: LiveServer) -> None:
    """Answered before its body was read (unknown session): trickling the rest must not keep the connection."""
    reply = await exchange(live, post_head(live, "/messages/?session_id=nope"), trickle=b"x" * 400)  # 20 s of drip
    assert reply.startswith(b"HTTP/1.1 404") and b"connection: close" in reply.lower(), reply[:300]


@pytest.mark.anyio
async def test_a_trickling_body_gets_408_however_steadily_it_trickles(live: LiveServer) -> None:
    reply = await exchange(live, post_head(live), trickle=b"x" * 200)  # a byte every 50 ms would take 10 s
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]


@pytest.mark.anyio
async def test_a_body_that_arrives_in_time_is_served(live: LiveServer) -> None:
    reply = await exchange(
        live, post_head(live, length=len(INIT)).replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"), INIT
    )
    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]


@pytest.mark.anyio
@pytest.mark.parametrize("host", [None, b"127.0.0.1:1@evil.example", b"localhost:80:80", b"localhost/x", b"[::1",
                                  b"localhost extra", b"localhost:port", b"127.0.0.1\tevil"],
                         ids=["missing", "userinfo", "two ports", "path", "open bracket", "space", "named port", "tab"])
async def test_requests_without_a_valid_host_are_refused(live: LiveServer, host: bytes | None) -> None:
    head = post_head(live, length=len(INIT), host=host).replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n")
    reply = await exchange(live, head, INIT)
    assert reply.startswith(b"HTTP/1.1 403") and b"Host header not allowed" in reply, reply[:300]
    assert not live.session_table.streamable


@pytest.mark.anyio
async def test_two_host_headers_are_refused(live: LiveServer) -> None:
    allowed_last = f"\r\nHost: 127.0.0.1:{live.port}\r\nConnection: close\r\n\r\n".encode()
    head = post_head(live, length=len(INIT), host=b"evil.example").replace(b"\r\n\r\n", allowed_last)
    reply = await exchange(live, head, INIT)
    assert reply.startswith(b"HTTP/1.1 403"), reply[:200]
    assert not live.session_table.streamable


@pytest.mark.anyio
async def test_allowed_hosts_with_ports_are_accepted(live: LiveServer) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        for host in (f"127.0.0.1:{live.port}", "localhost", "LOCALHOST:1", "[::1]:8000"):
            reply = await client.post(live.url, content=INIT, headers={**ACCEPT, "Host": host})
            assert reply.status_code == 200, (host, reply.text)


def test_max_connections_caps_what_uvicorn_serves() -> None:
    with server_process(["-m", "tests.helpers.fault_server", "--max-connections", "3"]) as base:
        port = int(base.rsplit(":", 1)[1])
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(3)]
        try:
            busy = httpx.get(f"{base}/healthz", timeout=10)
            assert busy.status_code == 503
        finally:
            for sock in idle:
                sock.close()
        with anyio.from_thread.start_blocking_portal() as portal:
            portal.call(until_healthy, base)


async def until_healthy(base: str) -> None:
    """The idle connections are gone once uvicorn serves again (it notices closed sockets on its own)."""
    async with httpx.AsyncClient(timeout=5) as client:
        with anyio.fail_after(10):
            while (await client.get(f"{base}/healthz")).status_code != 200:
                await anyio.sleep(0.02)


@pytest.mark.anyio
async def test_a_body_deadline_passing_between_reads_fails_the_next_read_and_cancels_nothing_else() -> None:
    """The sweep only cancels a task waiting in its read; otherwise the next read fails (the app's other work
    is never cancelled by it)."""
    import asyncio

    from mcp_kit._transports.http_security import BodyTimeout, _BodyDeadlines, _BodyGuard

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"{", "more_body": True}

    async def send(message: object) -> None:
        return None

    guard = _BodyGuard(receive, send, 1 << 20, 0.05, _BodyDeadlines(asyncio.get_running_loop()))
    assert (await guard.receive())["more_body"] is True
    await until(lambda: guard._expired, "the sweep to pass the deadline")  # the app is busy elsewhere meanwhile
    with pytest.raises(BodyTimeout):
        await guard.receive()
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0
