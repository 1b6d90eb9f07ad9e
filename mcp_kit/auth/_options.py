"""The OAuth command-line options every HTTP server shares, and the `AuthConfig` they make.

    --oauth-issuer URL             MCP_OAUTH_ISSUER             the authorization server (its issuer identifier)
    --oauth-resource URL           MCP_OAUTH_RESOURCE           this endpoint's canonical URI, e.g.
    https://mcp.example.com/mcp
    --oauth-scopes SCOPE ...       MCP_OAUTH_SCOPES             scopes every request needs (space- or comma-separated
    in env)
    --oauth-audience AUD           MCP_OAUTH_AUDIENCES          further accepted `aud` values (repeatable;
    comma-separated in env)
    --oauth-introspection-url URL  MCP_OAUTH_INTROSPECTION_URL  RFC 7662 endpoint for opaque tokens
    --oauth-client-id ID           MCP_OAUTH_CLIENT_ID          this server's client id for introspection
                                   MCP_OAUTH_CLIENT_SECRET      its secret (environment only: argv is visible to every
                                   user)

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
                       help="this server's client id at the authorization server, for introspection; the secret "
                            "comes from MCP_OAUTH_CLIENT_SECRET [env MCP_OAUTH_CLIENT_ID]")


def auth_config_from_args(args: argparse.Namespace) -> AuthConfig | None:
    """The AuthConfig the parsed options ask for (None without --oauth-issuer); ValueError names what is wrong."""
    issuer = getattr(args, "oauth_issuer", None)
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


def _split(value: str | None) -> list[str]:
    return [part for part in re.split(r"[\s,]+", value or "") if part]


def _flatten(values: list[str] | None) -> list[str]:
    return [part for value in values or [] for part in _split(value)]
