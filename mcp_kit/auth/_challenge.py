"""The `WWW-Authenticate: Bearer ...` challenge (RFC 6750 section 3, RFC 9728 section 5.1): build and parse.

A 401 tells the client where the Protected Resource Metadata is and which scopes to ask for; a 403
`insufficient_scope` names the scopes the request needs so the client can step up. Every value is
built to be sent as it is: printable ASCII (what a client sent, such as a resource URI quoted in a
description, is percent-encoded where it is not), so a header can always be encoded. Parsing is for
clients: `parse_bearer_challenge` reads the parameters of the Bearer challenge among any others.

Imports nothing from mcp_kit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}))\s*,?')
_SCHEME = re.compile(rf"\s*({_TOKEN})(?=\s+{_TOKEN}\s*=|\s*,|\s*$)")


def _quote(value: str) -> str:
    """`value` as a quoted-string a header can carry: ASCII only (RFC 9110 field values are bytes, and
    RFC 6750 limits error_description to printable ASCII), so control characters are dropped and every
    other character outside printable ASCII is percent-encoded as its UTF-8 bytes (`😀` -> `%F0%9F%98%80`)."""
    cleaned = "".join(
        ch if " " <= ch <= "~" else quote(ch, safe="", errors="backslashreplace")
        for ch in value
        if ch >= " " and ch != "\x7f"
    )
    return '"' + cleaned.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bearer_challenge(*, resource_metadata: str | None = None, scopes: Iterable[str] = (), error: str | None = None,
                     error_description: str | None = None) -> str:
    """The header value, e.g. `Bearer resource_metadata="https://...", scope="a b"`."""
    params: list[str] = []
    if error:
        params.append(f"error={_quote(error)}")
    if error_description:
        params.append(f"error_description={_quote(error_description)}")
    scope = " ".join(dict.fromkeys(scopes))
    if scope:
        params.append(f"scope={_quote(scope)}")
    if resource_metadata:
        params.append(f"resource_metadata={_quote(resource_metadata)}")
    return "Bearer " + ", ".join(params) if params else "Bearer"


def parse_bearer_challenge(header: str | None) -> dict[str, str] | None:
    """The parameters of the Bearer challenge in a WWW-Authenticate value (None when there is none)."""
    if not header:
        return None
    position: int = 0
    scheme: str | None = None
    params: dict[str, str] = {}
    found: dict[str, str] | None = None
    while position < len(header):
        param = _PARAM.match(header, position)
        if param and scheme is not None:
            value = param.group(2)
            params[param.group(1).lower()] = re.sub(r"\\(.)", r"\1", value) if value is not None else param.group(3)
            position = param.end()
            continue
        match = _SCHEME.match(header, position)
        if not match:
            break
        if scheme == "bearer":
            found = params
        scheme, params = match.group(1).lower(), {}
        position = match.end()
        while position < len(header) and header[position] in " ,":
            position += 1
    if scheme == "bearer":
        found = params
    return found
