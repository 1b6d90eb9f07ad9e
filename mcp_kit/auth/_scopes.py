"""Scope strings: parsing the forms authorization servers use, and deciding whether granted scopes suffice.

`scope` is a list of scope tokens separated by single spaces (U+0020) and nothing else (RFC 6749
section 3.3, RFC 9068); some providers send `scp` as a list or a string. A token is `%x21 / %x23-5B /
%x5D-7E`: one holding any other character (a tab, a no-break space, an ideographic space, a control
character, any non-ASCII letter) is not a scope, and grants nothing: it is dropped, and the valid
tokens beside it still count. So `"mcp:tools\u00a0things:write"` is one invalid token, not two scopes. A broader scope
may imply narrower ones (the 2026-07-28 authorization chapter asks servers
to account for such hierarchies): `implies` maps a scope to the scopes it includes.

Imports nothing from mcp_kit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")  # RFC 6749 section 3.3 (matched with fullmatch)


def parse_scopes(value: Any) -> frozenset[str]:
    """The scopes in a `scope`/`scp` claim: a string of tokens separated by U+0020, or a list of tokens.

    Tokens that are not RFC 6749 scope tokens (and empty ones, from doubled spaces) are dropped.
    """
    if isinstance(value, str):
        items: list[Any] = value.split(" ")
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        return frozenset()
    return frozenset(item for item in items if is_scope_token(item))


def is_scope_token(value: Any) -> bool:
    """Whether `value` is one RFC 6749 scope token (non-empty, `%x21 / %x23-5B / %x5D-7E` only)."""
    return isinstance(value, str) and _SCOPE_TOKEN.fullmatch(value) is not None


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
        if not is_scope_token(item):
            raise ValueError(f"{where}: {item!r} is not an OAuth scope (a non-empty string without spaces, quotes "
                             "or backslashes, e.g. 'files:write')")
    return tuple(dict.fromkeys(items))
