"""The OAuth command-line options every HTTP server shares, and the `AuthConfig` they make.

    --oauth-issuer URL             MCP_OAUTH_ISSUER             the authorization server (its issuer identifier)
    --oauth-resource URL           MCP_OAUTH_RESOURCE           this endpoint's canonical URI, e.g.
    https://mcp.example.com/mcp
    --oauth-scopes SCOPE ...       MCP_OAUTH_SCOPES             scopes every request needs (space- or comma-separated
    in env)
    --oauth-audience AUD           MCP_OAUTH_AUDIENCES          further accepted `aud` values (repeatable;
    comma-separated in env)
    --oauth-introspection-url URL  MCP_OAUTH_INTROSPECTION_URL  RFC 7662 endpoint for opaque tokens
    --oauth-client-id ID           MCP_OAUTH_CLIENT_ID          this server's client id (introspection, upstream)
                                   MCP_OAUTH_CLIENT_SECRET      its secret (environment only: argv is visible to every
                                   user)
    --oauth-client-secret-file F   MCP_OAUTH_CLIENT_SECRET_FILE ...or a file holding it

Signing users in at an identity provider without dynamic registration (the facade, `FacadeConfig`):

    --oauth-upstream NAME          MCP_OAUTH_UPSTREAM           entra, google, github, auth0, okta, keycloak or oidc
    --oauth-tenant T               MCP_OAUTH_TENANT             Entra ID: the tenant (id, domain, organizations, common)
    --oauth-domain D               MCP_OAUTH_DOMAIN             Auth0 / Okta: the domain; Keycloak: the base URL
    --oauth-realm R                MCP_OAUTH_REALM              Keycloak: the realm
    --oauth-discovery-url URL      MCP_OAUTH_DISCOVERY_URL      oidc: the provider's discovery (or issuer) URL
    --oauth-upstream-resource R    MCP_OAUTH_UPSTREAM_RESOURCE  the provider-side API (Entra api://..., Auth0 audience)
    --oauth-scope-map MCP=UP,...   MCP_OAUTH_SCOPE_MAP          the upstream scopes an MCP scope needs (repeatable)
    --oauth-public-url URL         MCP_OAUTH_PUBLIC_URL         this server's public base URL (default: the resource's)

Kept free of heavy imports: stdio servers parse these options too and never use them.
Imports nothing from mcp_kit but `auth.config` (lazily).
"""

from __future__ import annotations

import argparse
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._config import AuthConfig
    from ._facade_config import FacadeConfig


def add_oauth_arguments(group: argparse._ArgumentGroup) -> None:
    """Add the --oauth-* options to an argparse group."""
    env = os.environ.get
    group.add_argument("--oauth-issuer", metavar="URL", default=env("MCP_OAUTH_ISSUER"),
                       help="protect HTTP with OAuth 2.1: accept access tokens from this authorization server "
                            "(its issuer URL) [env MCP_OAUTH_ISSUER]")
    group.add_argument("--oauth-resource", metavar="URL", default=env("MCP_OAUTH_RESOURCE"),
                       help="the canonical URL clients use for this endpoint, e.g. https://mcp.example.com/mcp; "
                            "tokens must be issued for it [env MCP_OAUTH_RESOURCE]")
    group.add_argument("--oauth-scopes", metavar="SCOPE", nargs="+", default=_split(env("MCP_OAUTH_SCOPES")),
                       help="scopes every request needs [env MCP_OAUTH_SCOPES]")
    group.add_argument("--oauth-audience", metavar="AUD", action="append", default=_split(env("MCP_OAUTH_AUDIENCES")),
                       help="also accept tokens whose aud is AUD (providers whose audience is not the URL; "
                            "repeatable) [env MCP_OAUTH_AUDIENCES]")
    group.add_argument("--oauth-introspection-url", metavar="URL", default=env("MCP_OAUTH_INTROSPECTION_URL"),
                       help="RFC 7662 introspection endpoint for opaque tokens (default: the issuer's, when "
                            "--oauth-client-id is set) [env MCP_OAUTH_INTROSPECTION_URL]")
    group.add_argument("--oauth-client-id", metavar="ID", default=env("MCP_OAUTH_CLIENT_ID"),
                       help="this server's client id at the authorization server (for introspection, or at the "
                            "--oauth-upstream provider); the secret comes from MCP_OAUTH_CLIENT_SECRET or "
                            "--oauth-client-secret-file [env MCP_OAUTH_CLIENT_ID]")
    group.add_argument("--oauth-client-secret-file", metavar="FILE", default=env("MCP_OAUTH_CLIENT_SECRET_FILE"),
                       help="a file holding the client secret [env MCP_OAUTH_CLIENT_SECRET_FILE]")
    group.add_argument("--oauth-upstream", metavar="NAME", default=env("MCP_OAUTH_UPSTREAM"),
                       choices=UPSTREAMS,
                       help="be the MCP clients' authorization server and sign users in at this identity provider: "
                            f"{', '.join(UPSTREAMS)} (register --oauth-client-id there with the redirect URI "
                            "<public URL>/oauth/callback) [env MCP_OAUTH_UPSTREAM]")
    group.add_argument("--oauth-tenant", metavar="TENANT", default=env("MCP_OAUTH_TENANT"),
                       help="Entra ID: the tenant id or domain (or organizations, common) [env MCP_OAUTH_TENANT]")
    group.add_argument("--oauth-domain", metavar="DOMAIN", default=env("MCP_OAUTH_DOMAIN"),
                       help="Auth0 / Okta: the tenant's domain; Keycloak: its base URL [env MCP_OAUTH_DOMAIN]")
    group.add_argument("--oauth-realm", metavar="REALM", default=env("MCP_OAUTH_REALM"),
                       help="Keycloak: the realm [env MCP_OAUTH_REALM]")
    group.add_argument("--oauth-discovery-url", metavar="URL", default=env("MCP_OAUTH_DISCOVERY_URL"),
                       help="--oauth-upstream oidc: the provider's OpenID discovery URL (or its issuer URL) "
                            "[env MCP_OAUTH_DISCOVERY_URL]")
    group.add_argument("--oauth-upstream-resource", metavar="RESOURCE", default=env("MCP_OAUTH_UPSTREAM_RESOURCE"),
                       help="the provider-side API tokens are asked for: Entra api://<app id> (asked as "
                            "<resource>/.default), the Auth0 audience [env MCP_OAUTH_UPSTREAM_RESOURCE]")
    group.add_argument("--oauth-scope-map", metavar="MCP=UP,...", action="append",
                       default=_split(env("MCP_OAUTH_SCOPE_MAP"), r"\s+"),
                       help="the upstream scopes an MCP scope needs, e.g. repo:write=repo (repeatable) "
                            "[env MCP_OAUTH_SCOPE_MAP, space-separated]")
    group.add_argument("--oauth-public-url", metavar="URL", default=env("MCP_OAUTH_PUBLIC_URL"),
                       help="this server's public base URL as an authorization server (default: the origin of "
                            "--oauth-resource) [env MCP_OAUTH_PUBLIC_URL]")


UPSTREAMS = ("entra", "google", "github", "auth0", "okta", "keycloak", "oidc")


def auth_config_from_args(args: argparse.Namespace) -> AuthConfig | FacadeConfig | None:
    """The AuthConfig (or FacadeConfig) the options ask for; None without OAuth; ValueError names what is wrong."""
    issuer = getattr(args, "oauth_issuer", None)
    if getattr(args, "oauth_upstream", None):
        if issuer:
            raise ValueError("choose one: --oauth-issuer (tokens from your authorization server) or --oauth-upstream "
                             "(this server issues tokens and signs users in at an identity provider)")
        return facade_config_from_args(args)
    if not issuer:
        for name in ("oauth_resource", "oauth_introspection_url", "oauth_client_id"):
            if getattr(args, name, None):
                raise ValueError(f"--{name.replace('_', '-')} needs --oauth-issuer")
        return None
    if not args.oauth_resource:
        raise ValueError("--oauth-issuer needs --oauth-resource: the URL clients use for this endpoint, "
                         "e.g. https://mcp.example.com/mcp (tokens are bound to it)")
    if getattr(args, "auth_token", None):
        raise ValueError("choose one: --auth-token (one shared static token) or --oauth-issuer (OAuth 2.1)")
    from ._config import AuthConfig

    return AuthConfig(issuer=issuer, resource=args.oauth_resource, required_scopes=tuple(_flatten(args.oauth_scopes)),
                      audiences=tuple(_flatten(args.oauth_audience)),
                      introspection_url=args.oauth_introspection_url, introspection_client_id=args.oauth_client_id,
                      introspection_client_secret=os.environ.get("MCP_OAUTH_CLIENT_SECRET"))


def facade_config_from_args(args: argparse.Namespace) -> FacadeConfig:
    """The FacadeConfig of --oauth-upstream and its companions."""
    from ._facade_config import FacadeConfig, UpstreamProvider

    name = args.oauth_upstream
    if getattr(args, "auth_token", None):
        raise ValueError("choose one: --auth-token (one shared static token) or --oauth-upstream (OAuth 2.1)")
    if not args.oauth_resource:
        raise ValueError("--oauth-upstream needs --oauth-resource: the URL clients use for this endpoint, "
                         "e.g. https://mcp.example.com/mcp")
    if not args.oauth_client_id:
        raise ValueError(f"--oauth-upstream {name} needs --oauth-client-id: the client registered for this server "
                         f"at {name}")
    secret = _client_secret(args)
    resource = args.oauth_upstream_resource
    needs = {"entra": "oauth_tenant", "auth0": "oauth_domain", "okta": "oauth_domain", "keycloak": "oauth_domain",
             "oidc": "oauth_discovery_url"}
    if name in needs and not getattr(args, needs[name], None):
        raise ValueError(f"--oauth-upstream {name} needs --{needs[name].replace('_', '-')}")
    if name == "keycloak" and not args.oauth_realm:
        raise ValueError("--oauth-upstream keycloak needs --oauth-realm")
    options = {"resource": resource} if resource and name in ("entra", "oidc", "okta", "keycloak") else {}
    provider = {
        "entra": lambda: UpstreamProvider.entra(args.oauth_tenant, **options),
        "google": lambda: UpstreamProvider.google(),
        "github": lambda: UpstreamProvider.github(),
        "auth0": lambda: UpstreamProvider.auth0(args.oauth_domain, audience=resource),
        "okta": lambda: UpstreamProvider.okta(args.oauth_domain, **options),
        "keycloak": lambda: UpstreamProvider.keycloak(args.oauth_domain, args.oauth_realm, **options),
        "oidc": lambda: UpstreamProvider.oidc(args.oauth_discovery_url, **options),
    }[name]()
    scope_map: dict[str, tuple[str, ...]] = {}
    for entry in _flatten_with(args.oauth_scope_map, r"\s+"):
        mcp_scope, sep, upstream = entry.partition("=")
        if not sep or not mcp_scope or not upstream:
            raise ValueError(f"--oauth-scope-map takes MCP_SCOPE=UPSTREAM_SCOPE[,UPSTREAM_SCOPE...]; got {entry!r}")
        scope_map[mcp_scope] = tuple(part for part in upstream.split(",") if part)
    return FacadeConfig(resource=args.oauth_resource, upstream=provider, client_id=args.oauth_client_id,
                        client_secret=secret, issuer=args.oauth_public_url,
                        required_scopes=tuple(_flatten(args.oauth_scopes)), scope_map=scope_map)


def _client_secret(args: argparse.Namespace) -> str:
    path = getattr(args, "oauth_client_secret_file", None)
    if path:
        try:
            with open(path, encoding="utf-8") as handle:
                secret = handle.read().strip()
        except OSError as exc:
            raise ValueError(f"--oauth-client-secret-file {path}: {exc.strerror}") from None
    else:
        secret = os.environ.get("MCP_OAUTH_CLIENT_SECRET", "").strip()
    if not secret:
        raise ValueError("--oauth-upstream needs the client secret: --oauth-client-secret-file FILE or "
                         "MCP_OAUTH_CLIENT_SECRET (never on the command line)")
    return secret


def _split(value: str | None, separators: str = r"[\s,]+") -> list[str]:
    return [part for part in re.split(separators, value or "") if part]


def _flatten_with(values: list[str] | None, separators: str) -> list[str]:
    return [part for value in values or [] for part in _split(value, separators)]


def _flatten(values: list[str] | None) -> list[str]:
    return [part for value in values or [] for part in _split(value)]
