"""`FacadeConfig` and `UpstreamProvider`: an MCP server that signs its users in with an identity provider
the team already has, as one value from the command line to the facade.

    FacadeConfig(resource="https://mcp.example.com/mcp",
                 upstream=UpstreamProvider.entra(tenant="contoso.onmicrosoft.com"),
                 client_id="…", client_secret=open("/run/secrets/entra").read().strip(),
                 required_scopes=("mcp:tools",))

The server becomes an OAuth 2.1 authorization server for MCP clients (`_facade.py`): it publishes
its own metadata, registers MCP clients itself (RFC 7591, client ID metadata documents) and signs
each user in at the upstream provider with the one client registered there for this server
(`client_id` and `client_secret`, which never leave the server). `UpstreamProvider` says how to
talk to that provider; its class methods are the presets (`_facade_presets.py`).

Imports nothing from mcp_kit but `auth.config`, `auth.resource_uri` and (lazily) `auth.facade_presets`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from ._config import AuthConfig
from ._resource_uri import canonical_resource

ResourceStyle = Literal["indicator", "default_scope", "audience", "none"]
FACADE_ALGORITHM = "ES256"  # the facade signs its access tokens with a P-256 key it keeps in the backend


@dataclass(frozen=True)
class UpstreamProvider:
    """How the facade talks to one identity provider (endpoints, scopes, where the user's identity is).

    OIDC providers need only `discovery_url` (endpoints, issuer and keys come from it); a plain
    OAuth 2.0 provider (GitHub) names its endpoints and a `userinfo_endpoint` whose JSON names the
    user (`subject_claim`, `username_claim`). `resource` is the provider-side API a token is asked
    for, sent as `resource_style` says: an RFC 8707 `resource` parameter (`indicator`), a
    `<resource>/.default` scope (`default_scope`, Microsoft Entra ID v2, which refuses `resource`),
    an `audience` parameter (`audience`, Auth0) or not at all (`none`).
    """

    name: str
    discovery_url: str | None = None
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    userinfo_endpoint: str | None = None
    issuer: str | None = None  # the ID token's expected `iss` (default: the discovery document's)
    jwks_uri: str | None = None
    scopes: tuple[str, ...] = ("openid", "profile", "email")
    identity: Literal["id_token", "userinfo"] = "id_token"
    subject_claim: str = "sub"
    username_claim: str = "preferred_username"
    token_auth: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    authorize_params: Mapping[str, str] = field(default_factory=dict)
    resource: str | None = None
    resource_style: ResourceStyle = "indicator"
    api_headers: Mapping[str, str] = field(default_factory=dict)  # sent with userinfo requests (GitHub's Accept)

    def __post_init__(self) -> None:
        if not self.discovery_url and not (self.authorization_endpoint and self.token_endpoint):
            raise ValueError(f"the upstream provider {self.name!r} needs a discovery_url, or an "
                             "authorization_endpoint and a token_endpoint")
        if self.identity == "userinfo" and not (self.userinfo_endpoint or self.discovery_url):
            raise ValueError(f"the upstream provider {self.name!r} names users through a userinfo_endpoint; give one")

    # ------------------------------------------------------------------ presets (see `_facade_presets.py`)

    @classmethod
    def entra(cls, tenant: str, **options: Any) -> UpstreamProvider:
        """Microsoft Entra ID (v2 endpoints) for `tenant` (a tenant id, domain, `organizations` or `common`)."""
        from ._facade_presets import entra

        return cls(**entra(tenant, **options))

    @classmethod
    def google(cls, **options: Any) -> UpstreamProvider:
        from ._facade_presets import google

        return cls(**google(**options))

    @classmethod
    def github(cls, **options: Any) -> UpstreamProvider:
        """A GitHub OAuth app (no OIDC: the user is whoever `GET /user` says)."""
        from ._facade_presets import github

        return cls(**github(**options))

    @classmethod
    def auth0(cls, domain: str, **options: Any) -> UpstreamProvider:
        from ._facade_presets import auth0

        return cls(**auth0(domain, **options))

    @classmethod
    def okta(cls, domain: str, authorization_server: str | None = "default", **options: Any) -> UpstreamProvider:
        from ._facade_presets import okta

        return cls(**okta(domain, authorization_server, **options))

    @classmethod
    def keycloak(cls, base_url: str, realm: str, **options: Any) -> UpstreamProvider:
        from ._facade_presets import keycloak

        return cls(**keycloak(base_url, realm, **options))

    @classmethod
    def oidc(cls, discovery_url: str, **options: Any) -> UpstreamProvider:
        """Any OpenID Connect provider, by its discovery URL (or its issuer URL)."""
        from ._facade_presets import oidc

        return cls(**oidc(discovery_url, **options))


@dataclass(frozen=True)
class FacadeConfig:
    """An MCP server that is its clients' authorization server and signs users in at `upstream`."""

    resource: str  # this MCP endpoint's canonical URL, e.g. https://mcp.example.com/mcp
    upstream: UpstreamProvider
    client_id: str  # this server's client at the upstream provider
    client_secret: str = field(default="", repr=False)  # ...and its secret: configuration only, sent nowhere else
    issuer: str | None = None  # this server as an authorization server (default: the resource's origin)
    required_scopes: tuple[str, ...] = ()
    scopes_supported: tuple[str, ...] | None = None  # what clients may ask for (default: required + the tools')
    scope_map: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # MCP scope -> upstream scopes it needs
    scope_implies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    access_token_ttl: float = 600.0
    refresh_token_ttl: float = 14 * 86400.0
    code_ttl: float = 60.0
    pending_ttl: float = 600.0  # an authorization in progress (consent, upstream sign-in)
    consent_ttl: float = 30 * 86400.0  # how long an approval of one client by one user is remembered
    client_ttl: float = 90 * 86400.0  # how long a dynamically registered client lives
    client_metadata_max_bytes: int = 5120
    client_metadata_timeout: float = 5.0
    allow_loopback_client_metadata: bool = False  # TESTS ONLY: fetch http://127.0.0.1 client metadata documents
    http_timeout: float = 10.0
    resource_name: str | None = None
    audit: Callable[[dict[str, Any]], None] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resource", canonical_resource(self.resource.strip()))
        object.__setattr__(self, "required_scopes", tuple(dict.fromkeys(self.required_scopes)))
        issuer = (self.issuer or _origin(self.resource)).strip().rstrip("/")
        if not issuer.lower().startswith(("https://", "http://")):
            raise ValueError(f"the facade's issuer must be an http(s) URL; got {issuer!r}")
        if urlsplit(issuer).query or urlsplit(issuer).fragment:
            raise ValueError("the facade's issuer has no query or fragment")
        object.__setattr__(self, "issuer", issuer)
        if not self.client_id:
            raise ValueError("the facade needs this server's client id at the upstream provider")
        if not self.client_secret:
            raise ValueError("the facade needs this server's client secret at the upstream provider "
                             "(--oauth-client-secret-file or MCP_OAUTH_CLIENT_SECRET)")
        for name in ("access_token_ttl", "refresh_token_ttl", "code_ttl", "pending_ttl", "consent_ttl", "client_ttl"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")

    @property
    def published_scopes(self) -> tuple[str, ...]:
        return self.scopes_supported if self.scopes_supported is not None else self.required_scopes

    @property
    def callback_url(self) -> str:
        """The redirect URI to register at the upstream provider."""
        return f"{self.issuer}/oauth/callback"

    def auth_config(self) -> AuthConfig:
        """The resource-server side: tokens this facade issued, for this resource, with these scopes."""
        return AuthConfig(issuer=str(self.issuer), resource=self.resource, required_scopes=self.required_scopes,
                          scopes_supported=self.published_scopes, algorithms=(FACADE_ALGORITHM,),
                          scope_implies=self.scope_implies, resource_name=self.resource_name, leeway=5.0,
                          http_timeout=self.http_timeout)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))
