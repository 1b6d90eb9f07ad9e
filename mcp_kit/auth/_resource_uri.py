"""The canonical URI of a protected MCP endpoint (RFC 8707 section 2, RFC 9728), and audience matching.

The MCP authorization chapter names the canonical URI of a server as its resource identifier:
absolute, http(s), no fragment, lowercase scheme and host, and preferably no trailing slash.
`canonical_resource` is the one place that spells a resource URI canonically: scheme and host
lowercased, the default port dropped, one trailing slash dropped; everything else is kept as it is
and compared exactly. Anything that could make two different strings name "the same" resource by
accident of parsing is refused instead of forgiven: userinfo (`http://x@host/mcp`), a fragment,
whitespace or control characters (which URL parsers silently remove), non-ASCII characters (an
internationalized host must be given in its ASCII form), and a port that is not plain digits. A
refused URI names no resource, so as an `aud` it never matches.

Imports nothing from mcp_kit.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_resource(uri: str) -> str:
    """`uri` in its canonical spelling; ValueError when it cannot name a resource."""
    if not isinstance(uri, str) or not uri or any(not "\x21" <= ch <= "\x7e" for ch in uri):
        raise ValueError(f"a resource URI must be an absolute http(s) URL of printable ASCII characters without "
                         f"spaces, e.g. https://mcp.example.com/mcp; got {uri!r}")
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(
            f"a resource URI must be an absolute http(s) URL, e.g. https://mcp.example.com/mcp; got {uri!r}"
        )
    if parts.fragment or "#" in uri:
        raise ValueError(f"a resource URI must not contain a fragment (RFC 8707); got {uri!r}")
    if "@" in parts.netloc:
        raise ValueError(f"a resource URI must not contain userinfo (user@host); got {uri!r}")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    port_text = parts.netloc.rpartition("]")[2].partition(":")[2]
    if port_text and not port_text.isdigit():
        raise ValueError(f"a resource URI needs a valid port; got {uri!r}")
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"a resource URI needs a valid port; got {uri!r}") from exc
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = parts.path[:-1] if parts.path.endswith("/") else parts.path
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def same_resource(candidate: str, resource: str) -> bool:
    """Whether `candidate` (an `aud` value, a PRM `resource`) names the same resource as `resource`: their
    canonical spellings are equal (False when either cannot name a resource)."""
    try:
        return canonical_resource(candidate) == canonical_resource(resource)
    except ValueError:
        return False


def accepts_audience(value: str, resource: str, audiences: tuple[str, ...] = ()) -> bool:
    """Whether a token whose audience holds `value` is meant for `resource`: the same resource, or exactly
    one of the further `audiences` the server accepts (identifiers that are not URLs, compared as given)."""
    return value in audiences or same_resource(value, resource)


def resource_path(resource: str) -> str:
    """The path of the resource URI ('' for a server at the root), as RFC 9728 appends it to the well-known path."""
    return urlsplit(canonical_resource(resource)).path
