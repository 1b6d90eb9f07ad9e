"""Authorization server metadata (RFC 8414, OpenID Connect Discovery): where to look, and what to trust.

For an issuer with a path (`https://auth.example.com/tenant1`) the MCP spec's order is: OAuth
metadata with path insertion, OpenID with path insertion, OpenID with the path appended; for one
without a path: OAuth, then OpenID. A document whose `issuer` is not identical to the issuer asked
for is not used (RFC 8414 section 3.3), which stops a metadata document from redirecting a client
or a resource server to another authorization server's endpoints or keys.

Used by the resource server (to find `jwks_uri` and `introspection_endpoint`) and by the client.
Imports nothing from mcp_kit.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ._errors import MetadataError

OAUTH_SUFFIX = "/.well-known/oauth-authorization-server"
OPENID_SUFFIX = "/.well-known/openid-configuration"


def metadata_urls(issuer: str) -> list[str]:
    """The well-known URLs to try for `issuer`, in the MCP spec's priority order."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(new_path: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, new_path, "", ""))

    if path:
        return [at(OAUTH_SUFFIX + path), at(OPENID_SUFFIX + path), at(path + OPENID_SUFFIX)]
    return [at(OAUTH_SUFFIX), at(OPENID_SUFFIX)]


async def fetch_metadata(http: httpx.AsyncClient, issuer: str) -> dict[str, Any]:
    """The first valid metadata document for `issuer`; MetadataError says what was tried."""
    problems: list[str] = []
    for url in metadata_urls(issuer):
        try:
            response = await http.get(url, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            problems.append(f"{url}: {exc or type(exc).__name__}")
            continue
        if response.status_code != 200:
            problems.append(f"{url}: HTTP {response.status_code}")
            continue
        try:
            document = response.json()
        except ValueError:
            problems.append(f"{url}: not JSON")
            continue
        if not isinstance(document, dict):
            problems.append(f"{url}: not a JSON object")
            continue
        if document.get("issuer") != issuer:
            problems.append(f"{url}: names issuer {document.get('issuer')!r}, not {issuer!r}")
            continue
        return document
    raise MetadataError(f"no usable authorization server metadata for {issuer} ({'; '.join(problems)})")
