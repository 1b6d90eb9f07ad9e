"""HTTP guards in front of every MCP endpoint: Host/Origin allow-lists, bearer token, body size.

DNS-rebinding protection: a browser page on a foreign origin must not reach a server bound to
loopback, so a request whose `Origin` (or `Host`) is not allowed gets 403. A bearer token, when
configured, is compared in constant time; a missing or wrong one gets 401 with
`WWW-Authenticate`. Bodies over the limit get 413. `/healthz` answers without credentials.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")
DEFAULT_MAX_BODY = 16 << 20


@dataclass
class SecurityPolicy:
    """What the guard accepts. Empty host/origin lists mean: do not check that header."""

    allowed_hosts: list[str] = field(default_factory=list)
    allowed_origins: list[str] = field(default_factory=list)
    auth_token: str | None = None
    max_body: int = DEFAULT_MAX_BODY
    open_paths: tuple[str, ...] = ("/healthz",)

    @classmethod
    def for_bind(cls, host: str, port: int | None = None, *, allowed_origins: list[str] | None = None,
                 allowed_hosts: list[str] | None = None, auth_token: str | None = None,
                 max_body: int = DEFAULT_MAX_BODY) -> SecurityPolicy:
        """Defaults that fit the bind address: loopback names when bound to loopback."""
        loopback = _is_loopback(host)
        hosts = list(allowed_hosts or [])
        origins = list(allowed_origins or [])
        if loopback:
            hosts += [name for name in LOOPBACK_NAMES]
            origins += [f"{scheme}://{name}" for scheme in ("http", "https") for name in LOOPBACK_NAMES]
        return cls(allowed_hosts=hosts, allowed_origins=origins, auth_token=auth_token, max_body=max_body)

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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.policy.open_paths:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        policy = self.policy
        if not policy.host_allowed(headers.get("host")):
            await _reject(send, 403, "Forbidden: Host header not allowed (DNS rebinding protection)")
            return
        if not policy.origin_allowed(headers.get("origin")):
            await _reject(send, 403, "Forbidden: Origin not allowed (DNS rebinding protection)")
            return
        if not policy.token_ok(headers.get("authorization")):
            error = 'error="invalid_token", ' if headers.get("authorization") else ""
            await _reject(send, 401, "Unauthorized: send 'Authorization: Bearer <token>'",
                          [(b"www-authenticate", f'Bearer realm="mcp", {error}charset="UTF-8"'.encode())])
            return
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > policy.max_body:
            await _reject(send, 413, f"Payload too large: the limit is {policy.max_body} bytes")
            return
        await self.app(scope, _limited(receive, policy.max_body), send)


def _limited(receive: Receive, limit: int) -> Receive:
    seen = 0

    async def wrapped() -> Any:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge(limit)
        return message

    return wrapped


class BodyTooLarge(Exception):
    """A chunked body went past the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"Payload too large: the limit is {limit} bytes")


async def _reject(send: Send, status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())] + (extra or [])})
    await send({"type": "http.response.body", "body": body})
