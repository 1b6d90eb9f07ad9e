"""`AccessToken`: what a validated access token says about the caller, and nothing it could be replayed with.

The guard stores one per authorized request in the ASGI scope (`scope["state"]["access_token"]`,
i.e. `request.state.access_token` in Starlette). It never holds the token string itself, so a
handler cannot pass the caller's token on to another API (the MCP spec forbids token passthrough).

Imports nothing from mcp_kit but `auth.scopes`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from .scopes import missing_scopes

STATE_KEY = "access_token"


@dataclass(frozen=True)
class AccessToken:
    """A validated access token: who (subject), through which client, allowed what (scopes), until when."""

    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    expires_at: float | None
    issuer: str
    audience: tuple[str, ...]
    source: Literal["jwt", "introspection"]
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False)
    fingerprint: str = field(default="", repr=False)  # first bytes of the token's SHA-256, for log correlation

    def __post_init__(self) -> None:
        object.__setattr__(self, "claims", MappingProxyType(dict(self.claims)))

    def missing(self, required: Iterable[str], implies: Mapping[str, Iterable[str]] | None = None) -> tuple[str, ...]:
        """The scopes of `required` this token does not grant."""
        return missing_scopes(self.scopes, required, implies)


def access_token_of(scope: Mapping[str, Any]) -> AccessToken | None:
    """The AccessToken the guard left in an ASGI scope (None when the request was not OAuth-authorized)."""
    state = scope.get("state")
    token = state.get(STATE_KEY) if isinstance(state, Mapping) else None
    return token if isinstance(token, AccessToken) else None
