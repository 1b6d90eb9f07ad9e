"""Who is calling, as one string: the key per-caller rate limits, private cache entries and user state use.

The rule is `peer.caller_key`'s (OAuth subject, else the handshake-era session, else the HTTP
client's address); this module applies it to a handler's `Context`.

Imports nothing from mcp_kit but the context, the peer facts and versions.
"""

from __future__ import annotations

from .._protocol.peer import caller_key
from .._protocol.versions import is_stateless
from .context import Context


def caller_of(ctx: Context) -> str:
    """The caller of the request `ctx` serves (see `peer.caller_key`)."""
    return caller_key(ctx.principal, ctx.session_id, is_stateless(ctx.protocol_version))
