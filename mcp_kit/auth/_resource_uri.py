"""The canonical URI of a protected MCP endpoint (RFC 8707 section 2, RFC 9728), and audience matching.

The MCP authorization chapter names the canonical URI of a server as its resource identifier:
absolute, http(s), no fragment, lowercase scheme and host, and preferably no trailing slash. Servers
should accept the spellings a client may reasonably produce for the same resource, so matching
compares normalized forms: scheme and host case-folded, the default port dropped, one trailing
slash ignored. Nothing else is forgiven: another host, port or path is another resource.

Imports nothing from mcp_kit.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_resource(uri: str) -> str:
    """`uri` in its canonical spelling; ValueError when it cannot name a resource."""
    parts = urlsplit(uri.strip())
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"a resource URI must be an absolute http(s) URL, e.g. https://mcp.example.com/mcp; got {uri!r}")
    if parts.fragment or "#" in uri:
        raise ValueError(f"a resource URI must not contain a fragment (RFC 8707); got {uri!r}")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"a resource URI needs a valid port; got {uri!r}") from exc
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = parts.path.rstrip("/") if parts.path not in ("", "/") else ""
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def same_resource(candidate: str, resource: str) -> bool:
    """Whether `candidate` (an `aud` value, a PRM `resource`) names the same resource as `resource`."""
    try:
        return canonical_resource(candidate) == canonical_resource(resource)
    except ValueError:
        return False


def resource_path(resource: str) -> str:
    """The path of the resource URI ('' for a server at the root), as RFC 9728 appends it to the well-known path."""
    return urlsplit(canonical_resource(resource)).path
