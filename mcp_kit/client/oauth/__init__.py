"""The client side of MCP authorization: OAuth 2.1 with PKCE, resource indicators, discovery and step-up.

    from mcp_kit.client import connect
    from mcp_kit.client.oauth import OAuth, OAuthClientConfig, FileTokenStore

    auth = OAuth(url, OAuthClientConfig(store=FileTokenStore("~/.config/mcp-kit/tokens.json")))
    async with connect(url, auth=auth) as session: ...

Private modules: `_auth` (the httpx.Auth), `_flow` (discovery, registration, authorization, tokens),
`_redirects` (interactive loopback, headless, your own), `_store` (memory, 0600 file), `_pkce`, `_errors`.
"""

from ._auth import OAuth
from ._errors import OAuthError
from ._flow import OAuthClientConfig, OAuthFlow
from ._redirects import CallbackRedirect, HeadlessRedirect, LoopbackRedirect, RedirectHandler
from ._store import FileTokenStore, MemoryTokenStore, TokenStore

__all__ = [
    "CallbackRedirect",
    "FileTokenStore",
    "HeadlessRedirect",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "OAuthClientConfig",
    "OAuthError",
    "OAuthFlow",
    "RedirectHandler",
    "TokenStore",
]
