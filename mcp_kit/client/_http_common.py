"""What the HTTP transports share: the httpx client, turning HTTP failures into answers or reasons."""

from __future__ import annotations

import httpx

from .._protocol.jsonrpc import INTERNAL_ERROR, ErrorResponse, RequestId, decode_message
from ._errors import ConnectionClosed


def http_client(headers: dict[str, str] | None, timeout: float, auth: httpx.Auth | None = None) -> httpx.AsyncClient:
    """An httpx client whose reads may wait forever (event streams idle) but whose connects may not.

    `auth` (e.g. `mcp_kit.client.oauth.OAuth`) authorizes every request.
    """
    return httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(timeout, read=None), follow_redirects=True,
                             auth=auth)


def unreachable(url: str, exc: httpx.HTTPError) -> ConnectionClosed:
    return ConnectionClosed(f"cannot reach the server at {url}: {exc or type(exc).__name__}")


def is_jsonrpc_error(body: bytes) -> bool:
    return bool(body.strip()) and isinstance(decode_message(body), ErrorResponse)


def error_answer(request_id: RequestId, status: int, body: bytes) -> ErrorResponse:
    """The JSON-RPC error for a request that got an HTTP error: the server's own one when it sent one."""
    decoded = decode_message(body) if body.strip() else None
    if isinstance(decoded, ErrorResponse):  # the server's own JSON-RPC error, e.g. a 400 for bad params
        return ErrorResponse(request_id, decoded.code, f"HTTP {status}: {decoded.message}", decoded.data)
    text = body[:300].decode("utf-8", "replace").strip()
    hint = " (the server requires credentials, e.g. an Authorization: Bearer header)" if status in (401, 403) else ""
    return ErrorResponse(request_id, INTERNAL_ERROR, f"HTTP {status}{': ' + text if text else ''}{hint}")
