"""`mcp-kit list|call|read|prompt` against an OAuth-protected server: the options and the `OAuth` they make.

For a URL target the client authorizes itself when the server answers 401 (unless --no-oauth,
--auth-token or an Authorization header is given): interactively by default (the browser opens
the authorization server's page; the redirect comes back to 127.0.0.1), or headlessly with
--oauth-headless (the authorization server's redirects are followed without a browser: for tests
and for servers that sign in without a person).
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the client's OAuth loads when a command connects
    from ..client.oauth import OAuth, RedirectHandler


def add_oauth_client_arguments(parser: argparse.ArgumentParser) -> None:
    env = os.environ.get
    group = parser.add_argument_group("OAuth (HTTP servers that answer 401)")
    group.add_argument("--no-oauth", action="store_true", help="do not run the OAuth flow when the server answers 401")
    group.add_argument("--oauth-client-id", metavar="ID", default=env("MCP_KIT_OAUTH_CLIENT_ID"),
                       help="a client id registered at the authorization server (default: register dynamically) "
                            "[env MCP_KIT_OAUTH_CLIENT_ID; its secret, if any: MCP_KIT_OAUTH_CLIENT_SECRET]")
    group.add_argument("--oauth-client-metadata-url", metavar="URL", default=env("MCP_KIT_OAUTH_CLIENT_METADATA_URL"),
                       help="an https URL serving this client's metadata document, used as client id where the "
                            "authorization server accepts them [env MCP_KIT_OAUTH_CLIENT_METADATA_URL]")
    group.add_argument("--oauth-scopes", metavar="SCOPE", nargs="+", default=[],
                       help="scopes to ask for besides those the server names")
    group.add_argument("--oauth-headless", action="store_true",
                       help="follow the authorization server's redirects without a browser (tests; servers that "
                            "sign in without a person)")
    group.add_argument("--oauth-redirect-port", type=int, default=0, metavar="PORT",
                       help="interactive: the 127.0.0.1 port for the redirect back (default: any free port)")
    group.add_argument("--no-browser", action="store_true", help="interactive: print the URL, do not open a browser")
    group.add_argument("--oauth-token-cache", metavar="FILE", default=env("MCP_KIT_OAUTH_TOKEN_CACHE"),
                       help="keep client registrations and tokens in FILE (created 0600) so later runs need no "
                            "new login [env MCP_KIT_OAUTH_TOKEN_CACHE]")


def oauth_from_args(args: argparse.Namespace, url: str, headers: dict[str, str]) -> OAuth | None:
    """The OAuth for `url` the options ask for; None when the caller brings its own credentials or said --no-oauth."""
    if args.no_oauth or any(name.lower() == "authorization" for name in headers):
        return None
    from ..client.oauth import (
        FileTokenStore,
        HeadlessRedirect,
        LoopbackRedirect,
        MemoryTokenStore,
        OAuth,
        OAuthClientConfig,
    )

    redirect: RedirectHandler
    if args.oauth_headless:
        redirect = HeadlessRedirect(timeout=args.timeout)
    else:
        redirect = LoopbackRedirect(args.oauth_redirect_port, open_browser=not args.no_browser)
    store = FileTokenStore(args.oauth_token_cache) if args.oauth_token_cache else MemoryTokenStore()
    return OAuth(url, OAuthClientConfig(redirect=redirect, client_id=args.oauth_client_id,
                                        client_secret=os.environ.get("MCP_KIT_OAUTH_CLIENT_SECRET"),
                                        client_metadata_url=args.oauth_client_metadata_url,
                                        scopes=tuple(args.oauth_scopes), store=store, timeout=args.timeout))
