"""Protected Resource Metadata (RFC 9728): the document, and the well-known paths that serve it.

The document names this server's resource URI and its authorization server(s), so a client that
got a 401 can find where to obtain a token. It is served at `/.well-known/oauth-protected-resource`
followed by the resource URI's path (`.../oauth-protected-resource/mcp` for `https://host/mcp`),
and, as the MCP spec allows, at the bare well-known path too.

Imports nothing from mcp_kit but `auth.config` and `auth.resource_uri`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ._config import AuthConfig
from ._resource_uri import resource_path

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def metadata_document(config: AuthConfig) -> dict[str, Any]:
    """The RFC 9728 document for `config`."""
    document: dict[str, Any] = {
        "resource": config.resource,
        "authorization_servers": [config.issuer],
        "bearer_methods_supported": ["header"],
    }
    if config.published_scopes:
        document["scopes_supported"] = list(config.published_scopes)
    if config.resource_name:
        document["resource_name"] = config.resource_name
    if config.resource_documentation:
        document["resource_documentation"] = config.resource_documentation
    return document


def metadata_paths(config: AuthConfig) -> tuple[str, ...]:
    """The request paths that serve the document: path-suffixed first, then the root form."""
    suffixed = WELL_KNOWN + resource_path(config.resource)
    return (suffixed, WELL_KNOWN) if suffixed != WELL_KNOWN else (WELL_KNOWN,)


def metadata_url(config: AuthConfig) -> str:
    """The absolute URL of the document, as the `resource_metadata` challenge parameter gives it."""
    parts = urlsplit(config.resource)
    return urlunsplit((parts.scheme, parts.netloc, metadata_paths(config)[0], "", ""))
