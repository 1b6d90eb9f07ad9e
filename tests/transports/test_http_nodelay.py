"""Connections accepted by `mcp-kit`'s HTTP listener get TCP_NODELAY on the stdlib event loop.

Without it (uvicorn before 0.55 binds with proto 0, and asyncio sets TCP_NODELAY only on TCP-proto
sockets), each reply's headers and body leave as two segments and Nagle holds the second until the
client's delayed ACK: about 40 ms per request on Windows or wherever uvloop is missing. uvicorn 0.55
binds with IPPROTO_TCP itself; the project admits older releases, so the listener is still fixed up.
"""

from __future__ import annotations

import asyncio
import socket

import uvicorn

from mcp_kit._serving.serve import tcp_listener


def nodelay_of_accepted_connection(listener: socket.socket) -> int:
    """Serve `listener` on a stdlib asyncio loop; return TCP_NODELAY of the socket it accepts."""

    async def main() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
            try:
                return await asyncio.wait_for(accepted, 10)
            finally:
                writer.close()

    loop = asyncio.SelectorEventLoop()  # the stdlib loop, whatever policy is installed
    try:
        return loop.run_until_complete(main())
    finally:
        loop.close()


def uvicorn_socket() -> socket.socket:
    sock = uvicorn.Config(app=None, host="127.0.0.1", port=0).bind_socket()
    sock.listen(8)
    return sock


def proto_zero_socket() -> socket.socket:
    """A listener bound the way uvicorn bound one before 0.55: family and type given, proto left 0."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    return sock


def test_a_proto_zero_listener_accepts_connections_without_nodelay_on_the_stdlib_loop() -> None:
    # The control: what serve_http would serve on an older uvicorn without tcp_listener.
    assert nodelay_of_accepted_connection(proto_zero_socket()) == 0


def test_tcp_listener_gives_every_connection_of_a_proto_zero_listener_nodelay() -> None:
    listener = tcp_listener(proto_zero_socket())
    assert listener.proto == socket.IPPROTO_TCP
    assert nodelay_of_accepted_connection(listener) != 0


def test_the_listener_serve_http_uses_gives_every_connection_nodelay_whatever_uvicorn_binds() -> None:
    listener = tcp_listener(uvicorn_socket())
    assert listener.proto == socket.IPPROTO_TCP
    assert nodelay_of_accepted_connection(listener) != 0


def test_an_inherited_tcp_socket_and_a_unix_socket_are_left_as_they_are() -> None:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        assert tcp_listener(tcp) is tcp
        assert tcp_listener(unix) is unix
    finally:
        tcp.close()
        unix.close()
