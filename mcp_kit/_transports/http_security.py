"""HTTP guards in front of every MCP endpoint: Host/Origin allow-lists, bearer token, body size and time.

DNS-rebinding protection: a browser page on a foreign origin must not reach a server bound to
loopback, so a request whose `Origin` (or `Host`) is not allowed gets 403; while the host
allow-list is active, a request without a `Host`, or with one that is not `name[:port]`, is
refused the same way. A bearer token, when configured, is compared in constant time; a missing
or wrong one gets 401 with `WWW-Authenticate`. Bodies over the limit get 413; a body that has
not fully arrived `body_timeout` seconds after the app started reading it gets 408 (the
endpoints turn `BodyTooLarge` / `BodyTimeout` into those replies). `/healthz` and `/readyz` answer
without credentials.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import ipaddress
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from .._errors import MCPKitError
from .http_options import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")
HEADERS_KEY = "mcp_kit.headers"  # the scope key of the decoded headers the guard leaves for the endpoint


def decoded_headers(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """`raw` ASGI headers as a dict; for a repeated name the first value, as Starlette's `Headers.get` reads it."""
    return {k.decode("latin-1"): v.decode("latin-1") for k, v in reversed(raw)}


@dataclass
class SecurityPolicy:
    """What the guard accepts. Empty host/origin lists mean: do not check that header."""

    allowed_hosts: list[str] = field(default_factory=list)
    allowed_origins: list[str] = field(default_factory=list)
    auth_token: str | None = None
    max_body: int = DEFAULT_MAX_BODY
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    open_paths: tuple[str, ...] = ("/healthz", "/readyz")

    @classmethod
    def for_bind(cls, host: str, port: int | None = None, *, allowed_origins: list[str] | None = None,
                 allowed_hosts: list[str] | None = None, auth_token: str | None = None,
                 max_body: int = DEFAULT_MAX_BODY, body_timeout: float = DEFAULT_BODY_TIMEOUT) -> SecurityPolicy:
        """Defaults that fit the bind address: loopback names when bound to loopback."""
        loopback = _is_loopback(host)
        hosts = list(allowed_hosts or [])
        origins = list(allowed_origins or [])
        if loopback:
            hosts += [name for name in LOOPBACK_NAMES]
            origins += [f"{scheme}://{name}" for scheme in ("http", "https") for name in LOOPBACK_NAMES]
        return cls(allowed_hosts=hosts, allowed_origins=origins, auth_token=auth_token, max_body=max_body,
                   body_timeout=body_timeout)

    def host_allowed(self, host: str | None) -> bool:
        """True when the Host header names an allowed host exactly (any port); a missing Host is refused."""
        if not self.allowed_hosts:
            return True
        name = _host_name(host) if host is not None else None
        return name is not None and name in _host_names(tuple(self.allowed_hosts))

    def origin_allowed(self, origin: str | None) -> bool:
        """True for no Origin (not a browser), or one whose scheme and host are allowed exactly (any port)."""
        if origin is None:
            return True  # not a browser: nothing to rebind
        if "*" in self.allowed_origins:
            return True
        if not self.allowed_origins:
            return False
        exact = origin.lower().rstrip("/")
        base = _origin_base(origin)  # None unless `scheme://host[:port]`: `null`, userinfo, a path, a bad port...
        for allowed in self.allowed_origins:
            allowed = allowed.lower().rstrip("/")
            if allowed == exact or (base is not None and allowed == base):
                return True
        return False

    def token_ok(self, authorization: str | None) -> bool:
        if self.auth_token is None:
            return True
        if not authorization or not authorization.lower().startswith("bearer "):
            return False
        return hmac.compare_digest(authorization[7:].strip().encode(), self.auth_token.encode())


def _is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


_HOST_NAME = re.compile(r"(\[[0-9a-f:.]+\]|[^\[\]:@/\\]+)(?::[0-9]*)?")


def _host_name(host: str) -> str | None:
    """The name in a Host header (`name[:port]`, `[v6][:port]`), lower-cased; None when malformed."""
    match = _HOST_NAME.fullmatch(host.lower())
    return match.group(1) if match else None


@functools.lru_cache(maxsize=16)
def _host_names(allowed: tuple[str, ...]) -> frozenset[str]:
    """The names an allow-list admits (ports dropped, lower-cased), worked out once per list."""
    return frozenset(_host_name(entry) or entry.lower() for entry in allowed)


def _origin_base(origin: str) -> str | None:
    """`scheme://host` of a serialized origin (`scheme://host[:port]`, nothing more), else None."""
    try:
        parts = urlsplit(origin.lower())
        parts.port  # noqa: B018  # raises ValueError for a port that is not a number in range
    except ValueError:
        return None
    name = _host_name(parts.netloc)  # None for userinfo, or anything after the host but a port
    if not parts.scheme or name is None or parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    return f"{parts.scheme}://{name}"


class SecurityMiddleware:
    """Pure ASGI middleware applying a SecurityPolicy to HTTP requests."""

    def __init__(self, app: ASGIApp, policy: SecurityPolicy) -> None:
        self.app = app
        self.policy = policy
        self._deadlines: _BodyDeadlines | None = None
        self._hosts: dict[str | None, bool] = {}  # verdicts on the few Host values a server sees (bounded)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.policy.open_paths:
            await self.app(scope, receive, send)
            return
        raw = scope["headers"]
        scope[HEADERS_KEY] = decoded_headers(raw)  # read once: the endpoint takes them from here
        headers = scope[HEADERS_KEY]
        if len(headers) < len(raw):  # a repeated name: the checks below read its last value
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in raw}
        policy = self.policy
        length = headers.get("content-length")
        has_body = (length is not None and length != "0") or "transfer-encoding" in headers
        host = headers.get("host")
        host_ok = self._hosts.get(host)
        if host_ok is None:
            host_ok = policy.host_allowed(host)
            if len(self._hosts) < 64:
                self._hosts[host] = host_ok
        if not host_ok or (len(headers) < len(raw) and policy.allowed_hosts
                           and sum(1 for k, _ in scope["headers"] if k == b"host") > 1):
            await _reject(send, 403, "Forbidden: Host header not allowed (DNS rebinding protection)", has_body)
            return
        if not policy.origin_allowed(headers.get("origin")):
            await _reject(send, 403, "Forbidden: Origin not allowed (DNS rebinding protection)", has_body)
            return
        if not policy.token_ok(headers.get("authorization")):
            error = 'error="invalid_token", ' if headers.get("authorization") else ""
            await _reject(send, 401, "Unauthorized: send 'Authorization: Bearer <token>'", has_body,
                          [(b"www-authenticate", f'Bearer realm="mcp", {error}charset="UTF-8"'.encode())])
            return
        if length is not None and length.isdigit() and int(length) > policy.max_body:
            await _reject(send, 413, f"Payload too large: the limit is {policy.max_body} bytes", has_body)
            return
        if not has_body:
            await self.app(scope, receive, send)
            return
        if self._deadlines is None:
            self._deadlines = _BodyDeadlines(asyncio.get_running_loop())
        guard = _BodyGuard(receive, send, policy.max_body, policy.body_timeout, self._deadlines)
        try:
            await self.app(scope, guard.receive, guard.send)
        finally:
            if not guard.complete:
                self._deadlines.pending.discard(guard)


class _BodyGuard:
    """The app's `receive` and `send` for a request with a body.

    `receive` raises BodyTooLarge past `limit` bytes and BodyTimeout when the body is still incomplete
    `timeout` seconds after the app first asked for it; once the body is complete it adds nothing.
    `send` closes the connection after a response given before the body was read to its end (an early
    error): a client must not keep the connection by trickling the rest of a body nobody reads.
    The deadline costs no timer per request: `_BodyDeadlines` sweeps the bodies still arriving.
    """

    __slots__ = ("_receive", "_send", "_limit", "_timeout", "_deadlines", "_seen", "deadline", "complete",
                 "_task", "_waiting", "_expired")

    def __init__(self, receive: Receive, send: Send, limit: int, timeout: float, deadlines: _BodyDeadlines) -> None:
        self._receive, self._send, self._limit, self._timeout = receive, send, limit, timeout
        self._deadlines = deadlines
        self._seen = 0
        self.deadline = 0.0
        self.complete = False
        self._task: asyncio.Task[Any] | None = None
        self._waiting = False
        self._expired = False

    async def receive(self) -> Any:
        if self.complete:
            return await self._receive()
        if self._expired:
            raise BodyTimeout(self._timeout)
        if self._task is None:
            self._task = asyncio.current_task()
            self.deadline = self._deadlines.loop.time() + self._timeout
            self._deadlines.watch(self)
        self._waiting = True
        try:
            message = await self._receive()
        except asyncio.CancelledError:
            if self._expired and self._task is not None and self._task.uncancel() == 0:
                raise BodyTimeout(self._timeout) from None
            raise
        finally:
            self._waiting = False
        if message["type"] == "http.request":
            self._seen += len(message.get("body", b""))
            if self._seen > self._limit:
                raise BodyTooLarge(self._limit)
            self.complete = not message.get("more_body", False)
        else:
            self.complete = True
        if self.complete:
            self._deadlines.pending.discard(self)
        return message

    def expire(self) -> None:
        """The deadline passed: stop the read now if the app is waiting in it, else at its next read."""
        self._expired = True
        if self._waiting and self._task is not None:
            self._task.cancel()

    async def send(self, message: Any) -> None:
        if not self.complete and message["type"] == "http.response.start":
            self._deadlines.pending.discard(self)  # answered early: the rest of the body is not read
            headers = list(message.get("headers", []))
            if not any(name.lower() == b"connection" for name, _ in headers):
                message = {**message, "headers": headers + [(b"connection", b"close")]}
        await self._send(message)


class _BodyDeadlines:
    """The bodies still arriving, checked every `SWEEP_SECONDS` while there are any (one timer, not one per request)."""

    SWEEP_SECONDS = 0.25

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.pending: set[_BodyGuard] = set()
        self._timer: asyncio.TimerHandle | None = None

    def watch(self, guard: _BodyGuard) -> None:
        self.pending.add(guard)
        if self._timer is None:
            self._timer = self.loop.call_later(self.SWEEP_SECONDS, self._sweep)

    def _sweep(self) -> None:
        self._timer = None
        now = self.loop.time()
        for guard in [g for g in self.pending if g.deadline <= now]:
            self.pending.discard(guard)
            guard.expire()
        if self.pending:
            self._timer = self.loop.call_later(self.SWEEP_SECONDS, self._sweep)


class BodyTooLarge(MCPKitError):
    """A chunked body went past the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"Payload too large: the limit is {limit} bytes")


class BodyTimeout(MCPKitError):
    """The body did not arrive in time (a slow or stalled client)."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"Request Timeout: the body did not arrive within {timeout:g} s")


async def _reject(send: Send, status: int, message: str, unread_body: bool,
                  extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())] + (extra or [])
    if unread_body:  # the body is never read: do not let the client keep the connection by sending it slowly
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
