"""Validating opaque access tokens through the authorization server (RFC 7662 token introspection).

The resource server posts the token to the introspection endpoint, authenticated with its own
client credentials (HTTP Basic), and accepts it only when the answer says `active`, names this
issuer (when it names one), binds the token to this resource (`aud`, or `resource`), and has not
expired (its `exp`, `nbf` and `iat`, when present, finite numbers: `claims.py`). Positive answers are cached briefly
(`introspection_cache_ttl`, never past `exp`), keyed by
a SHA-256 of the token, never the token itself; the cache is bounded.

Imports nothing from mcp_kit but `auth.*`.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from ._claims import checked_expiry, strings
from ._config import AuthConfig
from ._errors import AuthServerUnavailable, InvalidToken
from ._principal import AccessToken
from ._scopes import parse_scopes

logger = logging.getLogger("mcp_kit.auth")
MAX_CACHED = 10_000


class Introspector:
    """Asks the authorization server about opaque tokens for one resource."""

    def __init__(self, config: AuthConfig, endpoint: Callable[[], Awaitable[str]],
                 http: Callable[[], httpx.AsyncClient], clock: Callable[[], float]) -> None:
        self.config = config
        self._endpoint = endpoint
        self._http = http
        self.clock = clock
        self._cache: OrderedDict[str, AccessToken] = OrderedDict()
        self._cached_until: dict[str, float] = {}
        self.requests = 0

    async def validate(self, token: str, digest: str) -> AccessToken:
        """`digest` is the token's SHA-256 (hex): the cache key."""
        now = self.clock()
        cached = self._cache.get(digest)
        if cached is not None and self._cached_until[digest] > now:
            return cached
        answer = await self._ask(token)
        principal = self._accept(answer, digest[:12])
        self._remember(digest, principal, now)
        return principal

    async def _ask(self, token: str) -> dict[str, Any]:
        url = await self._endpoint()
        auth = None
        if self.config.introspection_client_id:
            auth = httpx.BasicAuth(self.config.introspection_client_id, self.config.introspection_client_secret or "")
        self.requests += 1
        try:
            response = await self._http().post(
                url,
                data={"token": token, "token_type_hint": "access_token"},
                headers={"Accept": "application/json"},
                auth=auth or httpx.USE_CLIENT_DEFAULT,
            )
        except httpx.HTTPError as exc:
            raise AuthServerUnavailable(
                f"the introspection endpoint could not be reached: {type(exc).__name__}"
            ) from None
        if response.status_code != 200:
            logger.warning("token introspection answered HTTP %d", response.status_code)
            raise AuthServerUnavailable(f"the introspection endpoint answered HTTP {response.status_code}")
        try:
            answer = response.json()
        except ValueError:
            raise AuthServerUnavailable("the introspection endpoint did not answer JSON") from None
        if not isinstance(answer, dict):
            raise AuthServerUnavailable("the introspection endpoint did not answer a JSON object")
        return answer

    def _accept(self, answer: dict[str, Any], fingerprint: str) -> AccessToken:
        if answer.get("active") is not True:
            raise InvalidToken("the access token is not active (expired, revoked or unknown)")
        issuer = answer.get("iss")
        if issuer is not None and issuer != self.config.issuer:
            raise InvalidToken("the access token was issued by another authorization server")
        token_type = answer.get("token_type")
        if isinstance(token_type, str) and token_type.lower() == "refresh_token":
            raise InvalidToken("a refresh token is not an access token")
        audience = [*strings(answer.get("aud")), *strings(answer.get("resource"))]
        if not any(self.config.accepts_audience(value) for value in audience):
            raise InvalidToken("the access token was issued for another resource (its audience is not this server)")
        expires_at = checked_expiry(answer, now=self.clock(), leeway=self.config.leeway, require_exp=False)
        subject, client_id = answer.get("sub"), answer.get("client_id")
        return AccessToken(subject=subject if isinstance(subject, str) else None,
                           client_id=client_id if isinstance(client_id, str) else None,
                           scopes=parse_scopes(answer.get("scope")), expires_at=expires_at,
                           issuer=self.config.issuer, audience=tuple(audience), source="introspection",
                           claims=answer, fingerprint=fingerprint,
                           implies=self.config.scope_implies)

    def _remember(self, fingerprint: str, principal: AccessToken, now: float) -> None:
        until = now + self.config.introspection_cache_ttl
        if principal.expires_at is not None:
            until = min(until, principal.expires_at)
        self._cache[fingerprint] = principal
        self._cached_until[fingerprint] = until
        self._cache.move_to_end(fingerprint)
        while len(self._cache) > MAX_CACHED:
            old, _ = self._cache.popitem(last=False)
            self._cached_until.pop(old, None)
