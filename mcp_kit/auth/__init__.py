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

Signing in with an identity provider that registers no MCP clients (Entra ID, Google, GitHub, ...):
`FacadeConfig` makes the server its clients' authorization server in front of that provider
(`_facade` the endpoints, `_facade_config` with `UpstreamProvider` and its presets in
`_facade_presets`, `_facade_clients` registration and client metadata documents, `_facade_upstream`
the provider, `_facade_tokens` the server's own tokens, `_facade_store` the backend records,
`_facade_pages` the consent page and the audit trail).

    app.run(transport="http", auth=FacadeConfig(resource="https://mcp.example.com/mcp",
                                                upstream=UpstreamProvider.github(),
                                                client_id="Iv1.…", client_secret=secret))

This package imports nothing from the rest of mcp_kit but the root exception: the session,
transports and servers may use it, never the other way round.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._config import AuthConfig
    from ._errors import (
        AuthError,
        AuthServerUnavailable,
        InvalidRequest,
        InvalidToken,
        StepUpRequired,
        UpstreamTokenUnavailable,
    )
    from ._facade import UpstreamToken
    from ._facade_config import FacadeConfig, UpstreamProvider
    from ._principal import STATE_KEY, AccessToken, access_token_of

_HOMES = {"AuthConfig": "_config", "AuthError": "_errors", "AuthServerUnavailable": "_errors",
          "StepUpRequired": "_errors", "InvalidRequest": "_errors", "InvalidToken": "_errors",
          "STATE_KEY": "_principal", "AccessToken": "_principal", "access_token_of": "_principal",
          "FacadeConfig": "_facade_config", "UpstreamProvider": "_facade_config", "UpstreamToken": "_facade",
          "UpstreamTokenUnavailable": "_errors"}

__all__ = [
    "STATE_KEY",
    "AccessToken",
    "AuthConfig",
    "AuthError",
    "AuthServerUnavailable",
    "FacadeConfig",
    "StepUpRequired",
    "InvalidRequest",
    "InvalidToken",
    "UpstreamProvider",
    "UpstreamToken",
    "UpstreamTokenUnavailable",
    "access_token_of",
]


def __getattr__(name: str) -> Any:
    """Exports load on first use: every server parses the --oauth-* options, few use OAuth."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
