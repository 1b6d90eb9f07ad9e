"""`AuthConfig`: how an HTTP MCP server checks access tokens, as one value from the command line to the guard.

    AuthConfig(issuer="https://auth.example.com", resource="https://mcp.example.com/mcp",
               required_scopes=("mcp:tools",))

The server is an OAuth 2.1 resource server: it publishes Protected Resource Metadata naming
`issuer`, accepts JWT access tokens signed by the issuer's keys (found through its RFC 8414 /
OpenID metadata) whose `aud` is `resource` (or one of `audiences`), and opaque tokens through
RFC 7662 introspection when `introspection_url` (or the issuer's `introspection_endpoint`, with
`introspection_client_id`) is given.

Imports nothing from mcp_kit but `auth.resource_uri`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ._resource_uri import accepts_audience, canonical_resource

ASYMMETRIC_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


@dataclass(frozen=True)
class AuthConfig:
    """What the resource server trusts and requires."""

    issuer: str
    resource: str
    required_scopes: tuple[str, ...] = ()
    scopes_supported: tuple[str, ...] | None = None  # published in metadata; default: required_scopes
    audiences: tuple[str, ...] = ()  # further accepted `aud` values (providers whose audience is not a URL)
    introspection_url: str | None = None
    introspection_client_id: str | None = None
    introspection_client_secret: str | None = field(default=None, repr=False)
    jwks_uri: str | None = None  # default: from the issuer's metadata
    algorithms: tuple[str, ...] = ASYMMETRIC_ALGORITHMS
    leeway: float = 30.0  # seconds of clock skew allowed on exp / nbf / iat
    jwks_refresh_interval: float = 30.0  # at most one JWKS fetch per interval for unknown key ids
    jwks_max_age: float = 3600.0  # keys are re-fetched at least this often
    introspection_cache_ttl: float = 30.0
    scope_implies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    resource_name: str | None = None
    resource_documentation: str | None = None
    http_timeout: float = 10.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "resource", canonical_resource(self.resource.strip()))
        object.__setattr__(self, "required_scopes", tuple(dict.fromkeys(self.required_scopes)))
        issuer = self.issuer.strip()
        if not issuer.lower().startswith(("https://", "http://")):
            raise ValueError(f"the issuer must be an http(s) URL, e.g. https://auth.example.com; got {issuer!r}")
        object.__setattr__(self, "issuer", issuer)
        bad = [alg for alg in self.algorithms if alg not in ASYMMETRIC_ALGORITHMS]
        if bad:
            raise ValueError(f"only asymmetric signature algorithms can be verified with the issuer's public keys; "
                             f"not {', '.join(bad)}")
        if not self.algorithms:
            raise ValueError("at least one signature algorithm must be allowed")

    def accepts_audience(self, value: str) -> bool:
        """Whether an `aud` (or introspected `resource`) value names this server (`resource_uri.accepts_audience`)."""
        return accepts_audience(value, self.resource, self.audiences)

    @property
    def published_scopes(self) -> tuple[str, ...]:
        return self.scopes_supported if self.scopes_supported is not None else self.required_scopes
