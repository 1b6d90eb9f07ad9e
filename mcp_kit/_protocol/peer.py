"""What the transport knows about the request a handler is serving, carried in context variables.

- `CLIENT_ADDRESS`: the network address of the HTTP client that sent the request (None on stdio).
  The HTTP endpoint sets it before it feeds the dispatcher, whose request tasks copy the context,
  so every handler of that request (and nothing else) sees it.
- `ADMITTED`: the rate limits (`RateLimit` middleware) the HTTP transport already counted this
  lone request against before dispatching it (where it could still answer 429); those do not
  count it again.

A client cannot set either: they are Python context, never part of a message.

`caller_key` is the one rule for who a caller is (rate limits, private cache entries, user state):
1. `sub:<issuer>|<subject>` for an OAuth caller (`client:<id>` in place of a subject for a token
   without one: client credentials), whatever the era or transport;
2. `session:<id>` for a handshake-era request (one session: one client);
3. `addr:<host>` for a 2026-07-28 request over HTTP, which has no session: the client's address;
4. `session:<connection id>` otherwise (a 2026-07-28 request on stdio: the connection is the client).

Imports nothing.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

CLIENT_ADDRESS: ContextVar[str | None] = ContextVar("mcp_kit_client_address", default=None)
ADMITTED: ContextVar[tuple[object, ...]] = ContextVar("mcp_kit_rate_admitted", default=())


def caller_key(principal: Any, session_id: str | None, stateless: bool) -> str:
    """Who sent a request (the rule above); `principal` an `AccessToken` or None, `session_id` the
    request's session (a handshake-era session, or the connection of a 2026-07-28 request)."""
    if principal is not None:
        who = principal.subject if principal.subject is not None else f"client:{principal.client_id}"
        return f"sub:{principal.issuer}|{who}"
    if stateless or session_id is None:
        address = CLIENT_ADDRESS.get()
        if address is not None:
            return f"addr:{address}"
    return f"session:{session_id}"
