"""OAuth 2.1 for HTTP MCP servers: the resource-server side of the MCP authorization chapter.

    from mcp_kit.auth import AuthConfig

    app.run(transport="http", auth=AuthConfig(issuer="https://auth.example.com",
                                              resource="https://mcp.example.com/mcp",
                                              required_scopes=("mcp:tools",)))

Private modules, one job each: `_config` (AuthConfig), `_resource_uri` (canonical URIs, audience
matching), `_metadata` (RFC 9728 document and paths), `_challenge` (WWW-Authenticate build/parse),
`_discovery` (RFC 8414 / OpenID metadata), `_jwks` (key cache), `_jwt_tokens` (JWT validation, PyJWT),
`_introspection` (RFC 7662), `_validator` (which of the two), `_claims` (finite date claims),
`_principal` (AccessToken, the canonical owner), `_scopes`, `_errors`, `_middleware` (the ASGI guard),
`_step_up`, `_options` (command-line flags).

This package imports nothing from the rest of mcp_kit but the root exception: the session,
transports and servers may use it, never the other way round.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._config import AuthConfig
    from ._errors import AuthError, AuthServerUnavailable, InvalidRequest, InvalidToken, StepUpRequired
    from ._principal import STATE_KEY, AccessToken, access_token_of

_HOMES = {"AuthConfig": "_config", "AuthError": "_errors", "AuthServerUnavailable": "_errors",
          "StepUpRequired": "_errors", "InvalidRequest": "_errors", "InvalidToken": "_errors",
          "STATE_KEY": "_principal", "AccessToken": "_principal", "access_token_of": "_principal"}

__all__ = [
    "STATE_KEY",
    "AccessToken",
    "AuthConfig",
    "AuthError",
    "AuthServerUnavailable",
    "StepUpRequired",
    "InvalidRequest",
    "InvalidToken",
    "access_token_of",
]


def __getattr__(name: str) -> Any:
    """Exports load on first use: every server parses the --oauth-* options, few use OAuth."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
