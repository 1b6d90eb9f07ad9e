"""A real uvicorn serving an ASGI app from a thread of the test process, on a socket bound beforehand.

Binding first (port 0) gives the port before the app exists (an OAuth resource URI names it) and
leaves no window in which another process could take it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import uvicorn


def bound_socket() -> tuple[socket.socket, int]:
    """A socket listening on 127.0.0.1 (port 0: the system picks), and its port."""
    sock = socket.create_server(("127.0.0.1", 0))
    return sock, sock.getsockname()[1]


@contextlib.contextmanager
def serve(app: Any, sock: socket.socket, *, ready_timeout: float = 20.0) -> Iterator[str]:
    """Serve `app` on `sock` until the block ends; yields the base URL once the app answers `/healthz`."""
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        # the socket already listens: this request waits in its backlog and is answered once the app has started
        httpx.get(f"{base}/healthz", timeout=ready_timeout).raise_for_status()
        yield base
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()
