"""Validating JWT access tokens (RFC 9068) locally: signature, algorithm, issuer, time, audience.

JOSE library: PyJWT (with `cryptography`). Chosen over joserfc and Authlib because it is the most
widely deployed and longest-maintained of the three, it is already what the official MCP Python
SDK depends on, it is typed, and it has the safe defaults this needs: the caller must name the
accepted algorithms, `none` is never accepted, a key object is bound to one algorithm (so an RSA
public key cannot be abused as an HMAC secret), and short keys can be refused. Time claims are
checked here, against an injectable clock, rather than by PyJWT, so that tests can move time.

Checks, in order: the header (an allowed asymmetric `alg`; `typ` `at+jwt` where present, plain
`JWT` tolerated because common providers send it; no `crit`), the key (by `kid`, from the issuer's
JWKS, see `jwks.py`), the signature, `iss` (exactly the configured issuer), `exp` and `nbf` and
`iat` (finite numbers, with leeway: `claims.py`), and `aud` (this server's canonical resource URI,
or a configured audience: `AuthConfig.accepts_audience`).

Imports nothing from mcp_kit but `auth.*`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

import jwt

from ._claims import checked_expiry, strings
from ._config import AuthConfig
from ._errors import InvalidToken
from ._jwks import KeySet
from ._principal import AccessToken
from ._scopes import parse_scopes

ACCESS_TOKEN_TYPES = ("at+jwt", "application/at+jwt", "jwt")
CLIENT_ID_CLAIMS = ("client_id", "azp", "appid", "cid")


def looks_like_jwt(token: str) -> bool:
    """Three dot-separated parts whose first decodes to a JOSE header naming an `alg`."""
    if token.count(".") != 2:
        return False
    try:
        return "alg" in _decode_header(token)
    except InvalidToken:
        return False


def _decode_header(token: str) -> dict[str, Any]:
    try:
        segment = token.split(".", 1)[0]
        header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (ValueError, binascii.Error):
        raise InvalidToken("the access token is not a well-formed JWT") from None
    if not isinstance(header, dict):
        raise InvalidToken("the access token is not a well-formed JWT")
    return header


class JwtValidator:
    """Checks JWT access tokens against one issuer's keys and one resource."""

    def __init__(self, config: AuthConfig, keys: KeySet, clock: Callable[[], float]) -> None:
        self.config = config
        self.keys = keys
        self.clock = clock

    async def validate(self, token: str, fingerprint: str) -> AccessToken:
        header = _decode_header(token)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.config.algorithms:
            raise InvalidToken(f"access tokens signed with {alg!r} are not accepted; "
                               f"allowed: {', '.join(self.config.algorithms)}")
        typ = header.get("typ")
        if typ is not None and (not isinstance(typ, str) or typ.lower() not in ACCESS_TOKEN_TYPES):
            raise InvalidToken(f"a JWT of type {typ!r} is not an access token (expected at+jwt)")
        if "crit" in header:
            raise InvalidToken("the access token's header has critical extensions this server does not understand")
        kid = header.get("kid")
        key = await self.keys.key(kid if isinstance(kid, str) else None, alg)
        claims = _verified_claims(token, key, alg, self.config.issuer)
        expires_at = checked_expiry(claims, now=self.clock(), leeway=self.config.leeway, require_exp=True)
        audience = strings(claims.get("aud"))
        if not any(self.config.accepts_audience(value) for value in audience):
            raise InvalidToken("the access token was issued for another resource (its audience is not this server)")
        client_id = next((claims[name] for name in CLIENT_ID_CLAIMS if isinstance(claims.get(name), str)), None)
        subject = claims.get("sub")
        return AccessToken(subject=subject if isinstance(subject, str) else None, client_id=client_id,
                           scopes=parse_scopes(claims.get("scope", claims.get("scp"))),
                           expires_at=expires_at, issuer=self.config.issuer, audience=tuple(audience),
                           source="jwt", claims=claims, fingerprint=fingerprint,
                           implies=self.config.scope_implies)


def _verified_claims(token: str, key: jwt.PyJWK, alg: str, issuer: str) -> dict[str, Any]:
    try:
        return jwt.decode(token, key=key, algorithms=[alg], issuer=issuer,
                          options={"verify_aud": False, "verify_exp": False, "verify_nbf": False,
                                   "verify_iat": False, "require": ["iss", "exp", "aud"],
                                   "enforce_minimum_key_length": True})
    except jwt.InvalidSignatureError:
        raise InvalidToken("the access token's signature does not verify") from None
    except jwt.InvalidIssuerError:
        raise InvalidToken("the access token was issued by another authorization server") from None
    except jwt.MissingRequiredClaimError as exc:
        raise InvalidToken(f"the access token has no {exc.claim} claim") from None
    except jwt.PyJWTError as exc:
        raise InvalidToken(f"the access token could not be verified ({type(exc).__name__})") from None
