"""`TokenValidator`: one entry point that turns a bearer token into an `AccessToken` or an AuthError.

JWT-shaped tokens are verified locally against the issuer's published keys (`jwt_tokens.py`);
anything else goes to RFC 7662 introspection (`introspection.py`) when an endpoint is configured
or advertised and the server has credentials for it. A token that names no one (neither `sub` nor a
client id) is refused as invalid: a caller must be someone, for the sessions and request states
bound to it and for the audit trail. The issuer's metadata is discovered once
(`discovery.py`) and re-read after `jwks_max_age`. Owns the HTTP client used to reach the
authorization server; `aclose()` releases it.

Imports nothing from mcp_kit but `auth.*`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx

from ._config import AuthConfig
from ._discovery import MetadataError, fetch_metadata
from ._errors import AuthServerUnavailable, InvalidToken
from ._introspection import Introspector
from ._jwks import KeySet
from ._jwt_tokens import JwtValidator, looks_like_jwt
from ._principal import AccessToken


class TokenValidator:
    """Validates access tokens for one `AuthConfig`."""

    def __init__(self, config: AuthConfig, *, http: httpx.AsyncClient | None = None,
                 clock: Callable[[], float] = time.time, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._own_http = http is None
        self._client = http
        self._metadata: dict[str, Any] | None = None
        self._metadata_at = 0.0
        self._metadata_lock = anyio.Lock()
        self._monotonic = monotonic
        self.keys = KeySet(self._fetch_jwks, refresh_interval=config.jwks_refresh_interval,
                           max_age=config.jwks_max_age, clock=monotonic)
        self.jwt = JwtValidator(config, self.keys, clock)
        self.introspector = Introspector(config, self._introspection_endpoint, self._http, clock)

    async def validate(self, token: str) -> AccessToken:
        """The caller's AccessToken; InvalidToken / AuthServerUnavailable otherwise."""
        digest = hashlib.sha256(token.encode()).hexdigest()
        if looks_like_jwt(token):
            principal = await self.jwt.validate(token, digest[:12])
        elif self.config.introspection_url or self.config.introspection_client_id:
            principal = await self.introspector.validate(token, digest)
        else:
            raise InvalidToken("the access token is not a JWT, and this server has no introspection endpoint to ask")
        if principal.identity is None:
            raise InvalidToken("the access token names no one: it has neither a subject (sub) nor a client id")
        return principal

    async def aclose(self) -> None:
        if self._own_http and self._client is not None:
            await self._client.aclose()
            self._client = None

    # ------------------------------------------------------------------ the authorization server

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.config.http_timeout, follow_redirects=False)
        return self._client

    async def metadata(self) -> dict[str, Any]:
        """The issuer's metadata (RFC 8414 or OpenID), cached for `jwks_max_age`."""
        async with self._metadata_lock:
            if self._metadata is None or self._monotonic() - self._metadata_at >= self.config.jwks_max_age:
                try:
                    self._metadata = await fetch_metadata(self._http(), self.config.issuer)
                except MetadataError as exc:
                    if self._metadata is None:
                        raise AuthServerUnavailable(str(exc)) from None
                self._metadata_at = self._monotonic()
            return self._metadata

    async def _fetch_jwks(self) -> dict[str, Any]:
        uri = self.config.jwks_uri or (await self.metadata()).get("jwks_uri")
        if not isinstance(uri, str):
            raise AuthServerUnavailable(f"the issuer {self.config.issuer} publishes no jwks_uri")
        response = await self._http().get(uri, headers={"Accept": "application/json"})
        response.raise_for_status()
        document = response.json()
        if not isinstance(document, dict):
            raise ValueError("the JWK Set is not a JSON object")
        return document

    async def _introspection_endpoint(self) -> str:
        if self.config.introspection_url:
            return self.config.introspection_url
        url = (await self.metadata()).get("introspection_endpoint")
        if not isinstance(url, str):
            raise AuthServerUnavailable(f"the issuer {self.config.issuer} advertises no introspection_endpoint")
        return url
