"""Getting the user's authorization: the step between the authorization URL and the redirect back with a code.

A redirect handler has a `redirect_uri` (registered with the authorization server) and
`authorize(url)`, which returns the URL the authorization server redirected to (`...?code=&state=`).

- `HeadlessRedirect`: follows the authorization server's redirects with an HTTP client (cookies
  kept) until one points at the redirect URI. For tests and for servers that sign in without a
  person (a test authorization server, an existing single sign-on session); a login page fails
  with a clear message instead of hanging.
- `LoopbackRedirect`: the interactive mode. Listens on 127.0.0.1 (RFC 8252 loopback redirect),
  prints the URL on stderr and opens the browser, and waits for the one redirect back.
- `CallbackRedirect(redirect_uri, fn)`: any other way, e.g. a test that drives a browser itself.

Imports nothing from mcp_kit but `client.oauth.errors`.
"""

from __future__ import annotations

import sys
import webbrowser
from collections.abc import Awaitable, Callable
from typing import Protocol, cast
from urllib.parse import urljoin, urlsplit

import anyio
import anyio.abc
import httpx

from ._errors import OAuthError


class RedirectHandler(Protocol):
    @property
    def redirect_uri(self) -> str: ...

    async def authorize(self, authorization_url: str) -> str: ...


def _is_redirect_target(url: str, redirect_uri: str) -> bool:
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme, a.hostname, a.port, a.path) == (b.scheme, b.hostname, b.port, b.path)


class HeadlessRedirect:
    """Follow the authorization server's redirects without a browser."""

    def __init__(self, redirect_uri: str = "http://127.0.0.1:33418/callback", *, max_hops: int = 20,
                 timeout: float = 30.0) -> None:
        self.redirect_uri = redirect_uri
        self.max_hops = max_hops
        self.timeout = timeout

    async def authorize(self, authorization_url: str) -> str:
        url = authorization_url
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as browser:
            for _ in range(self.max_hops):
                response = await browser.get(url)
                location = response.headers.get("location")
                if response.status_code not in (301, 302, 303, 307, 308) or not location:
                    raise OAuthError(f"the authorization server answered HTTP {response.status_code} instead of "
                                     "redirecting back: it wants a person to sign in or consent; use the "
                                     "interactive mode (a browser) for this server")
                url = urljoin(url, location)
                if _is_redirect_target(url, self.redirect_uri):
                    return url
        raise OAuthError(f"the authorization server did not redirect back within {self.max_hops} hops")


class CallbackRedirect:
    """A redirect handler made of a redirect URI and an async function (authorization URL -> redirect URL)."""

    def __init__(self, redirect_uri: str, authorize: Callable[[str], Awaitable[str]]) -> None:
        self.redirect_uri = redirect_uri
        self._authorize = authorize

    async def authorize(self, authorization_url: str) -> str:
        return await self._authorize(authorization_url)


class LoopbackRedirect:
    """Interactive: open the browser at the authorization URL and catch the redirect on 127.0.0.1."""

    def __init__(self, port: int = 0, *, open_browser: bool = True, timeout: float = 300.0,
                 announce: Callable[[str], None] | None = None) -> None:
        self.port = port
        self.open_browser = open_browser
        self.timeout = timeout
        self.announce = announce or (lambda text: print(text, file=sys.stderr, flush=True))
        self._listener: anyio.abc.SocketListener | None = None

    @property
    def redirect_uri(self) -> str:
        if self.port == 0:
            raise RuntimeError("call `await prepare()` first: the port is chosen when listening starts")
        return f"http://127.0.0.1:{self.port}/callback"

    async def prepare(self) -> None:
        if self._listener is None:
            listeners = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
            listener = cast(anyio.abc.SocketListener, listeners.listeners[0])  # one address: 127.0.0.1
            self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
            self._listener = listener

    async def authorize(self, authorization_url: str) -> str:
        await self.prepare()
        assert self._listener is not None
        self.announce(f"Open this URL in a browser to authorize mcp-kit:\n\n  {authorization_url}\n")
        if self.open_browser:
            await anyio.to_thread.run_sync(webbrowser.open, authorization_url)
        try:
            with anyio.fail_after(self.timeout):
                while True:
                    connection = await self._listener.accept()
                    async with connection:
                        target = await _read_request_target(connection)
                        if target is None or not target.startswith("/callback"):
                            await _answer(connection, 404, "Not found.")
                            continue
                        await _answer(connection, 200, "Authorization received; you can close this window.")
                        return f"http://127.0.0.1:{self.port}{target}"
        except TimeoutError:
            raise OAuthError(f"no authorization arrived within {self.timeout:g} s") from None
        finally:
            await self.release()

    async def release(self) -> None:
        """Stop listening (`prepare` listens again); nothing happens when not listening."""
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.aclose()


async def _read_request_target(connection: anyio.abc.SocketStream) -> str | None:
    data = b""
    with anyio.move_on_after(10):
        while b"\r\n\r\n" not in data and len(data) < 16384:
            chunk = await connection.receive(4096)
            if not chunk:
                break
            data += chunk
    parts = data.split(b"\r\n", 1)[0].split()
    return parts[1].decode("latin-1") if len(parts) == 3 and parts[0] == b"GET" else None


async def _answer(connection: anyio.abc.SocketStream, status: int, text: str) -> None:
    body = f"<!doctype html><title>mcp-kit</title><p>{text}</p>".encode()
    head = (f"HTTP/1.1 {status} {'OK' if status == 200 else 'Not Found'}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    await connection.send(head + body)
