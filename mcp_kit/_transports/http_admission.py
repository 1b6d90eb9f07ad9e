"""Rate limits the HTTP transport applies before it dispatches a request: 429 with `Retry-After`.

A lone request (not a batch, not a tool call: those are refused where they run, a tool call with
an `isError` result the model can read) is counted by the application's `Admit` callback
(`mcp_kit.middleware.RateLimit.admit_http`); over its limit it never reaches the dispatcher and is
answered 429 with a `Retry-After` header (whole seconds, at least 1) and the JSON-RPC error
`RateLimited` (-31003, `retryAfter` in `data`) as the body. The callback marks a request it
counted (`callers.ADMITTED`), so the middleware does not count it twice.

Must not import: session, server, or anything MCP but the error facts.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.responses import JSONResponse
from starlette.responses import Response as HTTPResponse

from .._protocol.errors import RateLimited
from .._protocol.jsonrpc import Request

# (method, params, principal, session id or None, protocol version or None) -> the refusal, or None to go on
Admit = Callable[[str, dict[str, Any], Any, "str | None", "str | None"], Awaitable[RateLimited | None]]


async def rate_refusal(admit: Admit, message: Request, principal: Any, session_id: str | None,
                       version: str | None) -> HTTPResponse | None:
    """429 when `message` is over its rate limit, else None (and the request goes on, counted)."""
    params = message.params if isinstance(message.params, dict) else {}
    refused = await admit(message.method, params, principal, session_id, version)
    if refused is None:
        return None
    body = {"jsonrpc": "2.0", "id": message.id, "error": {"code": refused.code, "message": refused.message,
                                                          "data": refused.data}}
    return JSONResponse(body, status_code=429, headers={"Retry-After": str(max(1, math.ceil(refused.retry_after)))})
