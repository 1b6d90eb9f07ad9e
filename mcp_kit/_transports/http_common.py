"""What every HTTP endpoint reads the same way: MCP's headers, the Accept check, and a body decoded once
(413 past the size limit, 408 when it arrives too slowly, 400 for what is not JSON-RPC).

`LeanRequest` is what `/mcp` serves instead of a Starlette request: the ASGI scope and `receive`,
the headers as one dict (the first value of a repeated header, as Starlette's `Headers.get`), the
method, a `state` for what the endpoint logs, and `body()`. The security guard decodes the headers
once and leaves them in the scope (`HEADERS_KEY`); the endpoint takes them from there. Anything an
endpoint reads from a request (`HTTPRequestLike`) both kinds provide.

Must not import: session, server, or anything MCP.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from starlette.requests import ClientDisconnect
from starlette.responses import Response as HTTPResponse

from .._protocol.jsonrpc import INVALID_REQUEST, Decoded, ErrorResponse, InvalidMessage, decode_message
from .http_responses import error_response
from .http_security import HEADERS_KEY, BodyTimeout, BodyTooLarge, decoded_headers

__all__ = ["HEADERS_KEY", "HTTPRequestLike", "LeanRequest", "accepts", "decoded_headers", "is_json", "read_message"]

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"


class HTTPRequestLike(Protocol):
    """What the endpoints read from a request: a Starlette `Request` or a `LeanRequest`."""

    @property
    def scope(self) -> Any: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def method(self) -> str: ...

    @property
    def state(self) -> Any: ...

    @property
    def receive(self) -> Any: ...

    async def body(self) -> bytes: ...


class _State:
    """A request's attributes for the endpoint's own use (what it logs)."""

    __slots__ = ("rpc_method",)

    def __init__(self) -> None:
        self.rpc_method = "-"


class LeanRequest:
    """An HTTP request to `/mcp` as the endpoints read it, without Starlette's request object (see the module
    docstring). `body()` reads the body once, as Starlette's does (ClientDisconnect when the client left)."""

    __slots__ = ("scope", "receive", "headers", "method", "state", "_body")

    def __init__(self, scope: Any, receive: Any, headers: dict[str, str] | None = None) -> None:
        self.scope = scope
        self.receive = receive
        self.headers = headers if headers is not None else decoded_headers(scope["headers"])
        self.method: str = scope["method"]
        self.state = _State()
        self._body: bytes | None = None

    async def body(self) -> bytes:
        if self._body is not None:
            return self._body
        chunks: list[bytes] = []
        while True:
            message = await self.receive()
            if message["type"] == "http.request":
                chunk = message.get("body", b"")
                if not message.get("more_body", False):
                    if not chunks:  # the usual case: the whole body in one message
                        self._body = bytes(chunk)
                        return self._body
                    chunks.append(chunk)
                    break
                chunks.append(chunk)
            elif message["type"] == "http.disconnect":
                raise ClientDisconnect()
        self._body = b"".join(chunks)
        return self._body


def accepts(request: HTTPRequestLike, media: str) -> bool:
    """Whether the request's Accept header admits `media` (no header admits everything)."""
    accept = request.headers.get("accept")
    if not accept:
        return True
    return media in accept or "*/*" in accept


def is_json(request: HTTPRequestLike) -> bool:
    """Whether the request says its body is JSON."""
    return "application/json" in request.headers.get("content-type", "")


async def read_message(request: HTTPRequestLike) -> Decoded | HTTPResponse:
    """The body as a JSON-RPC message (or batch); 413 past the size limit, 400 for what is not JSON-RPC."""
    try:
        body = await request.body()
    except BodyTooLarge as exc:
        return error_response(413, INVALID_REQUEST, str(exc), {"Connection": "close"})
    except BodyTimeout as exc:  # the rest of a slow body is not waited for: the connection closes
        return error_response(408, INVALID_REQUEST, str(exc), {"Connection": "close"})
    decoded = decode_message(body)
    if isinstance(decoded, InvalidMessage):
        error = decoded.error or ErrorResponse(None, INVALID_REQUEST, "Bad Request")
        return error_response(400, error.code, error.message, request_id=error.id)
    return decoded
