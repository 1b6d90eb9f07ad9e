"""What the HTTP transport does with the caller's OAuth identity before it dispatches a request.

- `caller`: the `AccessToken` the OAuth guard validated for this HTTP request (None without OAuth);
  the transports hand it to the dispatcher with every request, and handlers see it as `ctx.principal`.
- `scope_refusal`: a request whose tool, resource or prompt needs scopes the caller's token lacks is
  answered 403 with a `WWW-Authenticate: Bearer error="insufficient_scope", scope=..., resource_metadata=...`
  challenge, so the client can step up and retry. Only a lone request can get one (a batch, or a
  legacy SSE post whose answer travels on another stream, is checked where it runs: `_app/methods.py`).
- `owns`: a handshake-era session belongs to the identity that opened it (`principal.session_owner`:
  issuer, kind and id); a request from another identity is answered as for an unknown session (404)
  and never reaches it.

The per-primitive scopes come from the application as a callback (`RequiredScopes`), the way
`Mcp-Param-*` header names do. Must not import: session, server, or anything MCP but the error facts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from starlette.responses import JSONResponse
from starlette.responses import Response as HTTPResponse

from .._protocol.errors import INSUFFICIENT_SCOPE
from .._protocol.errors import scope_refusal as refusal_text
from .._protocol.jsonrpc import Request
from ..auth._principal import STATE_KEY, AccessToken, may_use
from ..auth._step_up import step_up_of
from .connection import Served
from .http_common import HTTPRequestLike

logger = logging.getLogger("mcp_kit.http")

RequiredScopes = Callable[[str, dict[str, Any]], tuple[str, ...]]  # (method, params) -> scopes its primitive needs
NAMED_BY = {"tools/call": ("name", "Tool"), "prompts/get": ("name", "Prompt"), "resources/read": ("uri", "Resource"),
            "resources/subscribe": ("uri", "Resource"), "completion/complete": ("ref", "Completion of")}


def caller(request: HTTPRequestLike) -> AccessToken | None:
    """The caller's validated access token (None when the app is not behind the OAuth guard).

    `principal.access_token_of`, written for the hot path: ASGI state is a dict, and a server
    without OAuth pays two lookups per request.
    """
    state = request.scope.get("state")
    token = state.get(STATE_KEY) if state else None
    return token if token is not None and isinstance(token, AccessToken) else None


def scope_refusal(request: HTTPRequestLike, principal: AccessToken | None, message: Request,
                  required: RequiredScopes | None) -> HTTPResponse | None:
    """A 403 `insufficient_scope` answer when `message` names a primitive the caller lacks scopes for, else None."""
    if principal is None or required is None:
        return None
    params = message.params if isinstance(message.params, dict) else {}
    scopes = required(message.method, params)
    if not scopes:
        return None
    missing = principal.missing(scopes)
    if not missing:
        return None
    key, kind = NAMED_BY.get(message.method, ("name", message.method))
    text = refusal_text(f"{kind} {params.get(key)!r}", missing)
    step_up = step_up_of(request.scope)
    needed = step_up.needed(scopes)
    logger.info(
        "%s %s refused: the caller's token lacks %s", message.method, str(params.get(key))[:200], " ".join(missing)
    )
    body = {"jsonrpc": "2.0", "id": message.id, "error": {"code": INSUFFICIENT_SCOPE, "message": text, "data": {
        "error": "insufficient_scope", "scope": " ".join(needed), "missing": list(missing)}}}
    description = f"{kind.lower()} {str(params.get(key))[:200]!r} needs the scope(s) {' '.join(missing)}"
    return JSONResponse(body, status_code=403, headers={"WWW-Authenticate": step_up.challenge(scopes, description)})


def owns(served: Served, request: HTTPRequestLike) -> bool:
    """Whether the caller of `request` may use the session `served` (always, for a session opened without OAuth)."""
    return may_use(served.owner, caller(request))
