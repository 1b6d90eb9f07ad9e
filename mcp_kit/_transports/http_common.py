"""What every HTTP endpoint reads the same way: MCP's headers, the Accept check, and a body decoded once
(413 past the size limit, 408 when it arrives too slowly, 400 for what is not JSON-RPC).

Must not import: session, server, or anything MCP.
"""

from __future__ import annotations

from starlette.requests import Request as HTTPRequest
from starlette.responses import Response as HTTPResponse

from .._protocol.jsonrpc import INVALID_REQUEST, Decoded, ErrorResponse, InvalidMessage, decode_message
from .http_responses import error_response
from .http_security import BodyTimeout, BodyTooLarge

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"


def accepts(request: HTTPRequest, media: str) -> bool:
    """Whether the request's Accept header admits `media` (no header admits everything)."""
    accept = request.headers.get("accept")
    if not accept:
        return True
    return media in accept or "*/*" in accept


def is_json(request: HTTPRequest) -> bool:
    """Whether the request says its body is JSON."""
    return "application/json" in request.headers.get("content-type", "")


async def read_message(request: HTTPRequest) -> Decoded | HTTPResponse:
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
