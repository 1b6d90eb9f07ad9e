"""Scope strings: parsing the forms authorization servers use, and deciding whether granted scopes suffice.

`scope` is a space-separated string (RFC 6749, RFC 9068); some providers send `scp` as a list or a
string. A broader scope may imply narrower ones (the 2026-07-28 authorization chapter asks servers
to account for such hierarchies): `implies` maps a scope to the scopes it includes.

Imports nothing from mcp_kit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

_SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")  # RFC 6749 section 3.3


def parse_scopes(value: Any) -> frozenset[str]:
    """The scopes in a `scope`/`scp` claim: a space-separated string or a list of strings."""
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, (list, tuple)):
        return frozenset(item for item in value if isinstance(item, str) and item)
    return frozenset()


def expand(granted: Iterable[str], implies: Mapping[str, Iterable[str]] | None = None) -> frozenset[str]:
    """`granted` plus every scope the granted ones imply, transitively."""
    result = set(granted)
    if not implies:
        return frozenset(result)
    pending = list(result)
    while pending:
        for narrower in implies.get(pending.pop(), ()):
            if narrower not in result:
                result.add(narrower)
                pending.append(narrower)
    return frozenset(result)


def missing_scopes(granted: Iterable[str], required: Iterable[str],
                   implies: Mapping[str, Iterable[str]] | None = None) -> tuple[str, ...]:
    """The required scopes that `granted` (with what it implies) does not cover, in the order required."""
    have = expand(granted, implies)
    return tuple(scope for scope in dict.fromkeys(required) if scope not in have)


def scope_list(value: str | Iterable[str] | None, where: str) -> tuple[str, ...]:
    """The scopes a primitive declares (`scopes=["files:write"]`; a single string is one scope), checked.

    ValueError, naming `where`, for a scope that is not an RFC 6749 scope token (empty, spaces, quotes).
    """
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    for item in items:
        if not isinstance(item, str) or not _SCOPE_TOKEN.match(item):
            raise ValueError(f"{where}: {item!r} is not an OAuth scope (a non-empty string without spaces, quotes "
                             "or backslashes, e.g. 'files:write')")
    return tuple(dict.fromkeys(items))
