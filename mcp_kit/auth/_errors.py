"""Why a request is not authorized, as values the guard turns into HTTP answers.

    AuthError                 -> the request cannot go through
    ├── InvalidRequest        -> 400 invalid_request (e.g. a token in the query string, two credentials)
    ├── InvalidToken          -> 401 invalid_token (malformed, bad signature, expired, another audience...)
    ├── StepUpRequired     -> 403 insufficient_scope, naming the scopes the request needs
    └── AuthServerUnavailable -> 503: the authorization server could not be asked (JWKS, introspection)
    UpstreamTokenUnavailable  -> a tool asked for the caller's identity-provider token and there is none

Imports nothing from mcp_kit but the root exception. Messages never contain a token.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._errors import MCPKitError


class AuthError(MCPKitError):
    """A request that must not reach the MCP endpoint; `description` is safe to show the client."""

    status = 401
    error: str | None = None

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class InvalidRequest(AuthError):
    status = 400
    error: str | None = "invalid_request"


class InvalidToken(AuthError):
    status = 401
    error: str | None = "invalid_token"


class StepUpRequired(AuthError):
    status = 403
    error: str | None = "insufficient_scope"

    def __init__(self, description: str, scopes: Iterable[str]) -> None:
        super().__init__(description)
        self.scopes = tuple(scopes)


class AuthServerUnavailable(AuthError):
    status = 503
    error = None


class MetadataError(MCPKitError):
    """No usable authorization server metadata (unreachable, absent, or not about this issuer)."""


class UpstreamTokenUnavailable(MCPKitError):
    """`ctx.upstream_token()` has no token to give: no facade sign-in, a revoked grant, or a failed refresh.

    The message says why and what the caller can do (usually: authorize again); inside a tool it
    becomes an `isError` result with that message.
    """
