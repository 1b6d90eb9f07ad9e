"""Claim values read from hostile JSON (a JWT payload, an introspection answer): dates and string lists.

A date claim (`exp`, `nbf`, `iat`) is an RFC 7519 NumericDate: a finite number of seconds. JSON
parsers turn `1e400` into infinity and accept `NaN`, and an integer of 400 digits has no float;
none of these is a date, so a token carrying one is refused rather than compared (an infinite
`exp` would never expire, a `NaN` one compares false with everything). JWT validation and token
introspection check dates here, with the same rules.

Imports nothing from mcp_kit but `auth.errors`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ._errors import InvalidToken

DATE_CLAIMS = ("exp", "nbf", "iat")


def numeric_date(value: Any) -> float | None:
    """`value` as a finite number of seconds since the epoch; None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer beyond any float
        return None
    return number if math.isfinite(number) else None


def checked_expiry(claims: Mapping[str, Any], *, now: float, leeway: float, require_exp: bool) -> float | None:
    """The token's expiry (None when it has none and none is required), after checking `exp`, `nbf` and `iat`.

    Each date claim present must be a finite number; `exp` must not have passed, `nbf` and `iat` must
    not lie in the future (each with `leeway` seconds of clock skew). InvalidToken otherwise.
    """
    dates: dict[str, float] = {}
    for name in DATE_CLAIMS:
        if claims.get(name) is None:
            continue
        date = numeric_date(claims[name])
        if date is None:
            raise InvalidToken(f"the access token's {name} claim is not a finite number (a NumericDate)")
        dates[name] = date
    expires_at = dates.get("exp")
    if expires_at is None and require_exp:
        raise InvalidToken("the access token has no exp claim")
    if expires_at is not None and now > expires_at + leeway:
        raise InvalidToken("the access token expired")
    if "nbf" in dates and now + leeway < dates["nbf"]:
        raise InvalidToken("the access token is not valid yet (nbf)")
    if "iat" in dates and now + leeway < dates["iat"]:
        raise InvalidToken("the access token was issued in the future (iat)")
    return expires_at


def strings(value: Any) -> list[str]:
    """A claim that is a string or a list of strings (`aud`, `resource`), as a list; other items dropped."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []
