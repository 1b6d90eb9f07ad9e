"""The facade's own access tokens: JWTs (RFC 9068) signed with one P-256 key the whole deployment shares.

The first process to need the key creates it and stores it in the backend (`signing-key`, written
only when absent, so every process ends up with the same one). Access tokens are short-lived and
audience-bound (`aud` = the MCP resource), carry the user (`sub`), the client (`client_id`), the
granted scopes and the grant they belong to (`gid`). `FacadeValidator` accepts these tokens and
no others: an upstream provider's token (or anyone else's) has another issuer or an unknown key and
is refused, so there is no token passthrough. A token whose grant was revoked (RFC 7009, a replayed
code, a reused refresh token) is refused at once, before it expires.

Imports nothing from mcp_kit but `auth.*`.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from typing import Any

import anyio
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from ._errors import InvalidToken
from ._facade_config import FACADE_ALGORITHM, FacadeConfig
from ._facade_store import FacadeStore
from ._principal import AccessToken
from ._validator import TokenValidator

IDENTITY_CLAIMS = ("preferred_username", "email", "name")


class SigningKey:
    """The deployment's access-token key, loaded from (or first written to) the backend once per process."""

    def __init__(self, store: FacadeStore) -> None:
        self.store = store
        self._lock = anyio.Lock()
        self._key: tuple[str, Any] | None = None  # (kid, private key)

    async def get(self) -> tuple[str, Any]:
        async with self._lock:
            if self._key is None:
                record = await self.store.get("signing-key", "current")
                if record is None:
                    private = ec.generate_private_key(ec.SECP256R1())
                    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()).decode()
                    await self.store.put("signing-key", "current", {"kid": secrets.token_urlsafe(12), "pem": pem},
                                         None, only_new=True)
                    record = await self.store.get("signing-key", "current")
                if record is None:
                    raise RuntimeError("the signing key could not be stored in the backend")
                self._key = (record["kid"], serialization.load_pem_private_key(record["pem"].encode(), None))
            return self._key

    async def jwks(self) -> dict[str, Any]:
        kid, private = await self.get()
        public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private.public_key()))
        return {"keys": [{**public, "kid": kid, "use": "sig", "alg": FACADE_ALGORITHM}]}


class TokenIssuer:
    """Signs the facade's access tokens."""

    def __init__(self, config: FacadeConfig, key: SigningKey, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.key = key
        self.clock = clock

    async def access_token(self, grant_id: str, grant: dict[str, Any], scopes: list[str]) -> tuple[str, int]:
        kid, private = await self.key.get()
        now = int(self.clock())
        ttl = int(self.config.access_token_ttl)
        claims: dict[str, Any] = {"iss": self.config.issuer, "sub": grant["sub"], "aud": self.config.resource,
                                  "client_id": grant["client_id"], "scope": " ".join(scopes), "iat": now,
                                  "nbf": now, "exp": now + ttl, "jti": secrets.token_urlsafe(12), "gid": grant_id,
                                  "idp": self.config.upstream.name}
        claims.update({name: grant["profile"][name] for name in IDENTITY_CLAIMS if grant.get("profile", {}).get(name)})
        token = jwt.encode(claims, private, algorithm=FACADE_ALGORITHM, headers={"kid": kid, "typ": "at+jwt"})
        return token, ttl


class FacadeValidator(TokenValidator):
    """Validates the facade's own tokens: its key (no HTTP), its issuer, the resource, a live grant."""

    def __init__(self, config: FacadeConfig, store: FacadeStore, key: SigningKey) -> None:
        super().__init__(config.auth_config())
        self.store = store
        self.signing_key = key

    async def validate(self, token: str) -> AccessToken:
        principal = await super().validate(token)
        grant_id = principal.claims.get("gid")
        if not isinstance(grant_id, str) or await self.store.get("grant", grant_id) is None:
            raise InvalidToken("the access token was revoked; authorize again")
        return principal

    async def _fetch_jwks(self) -> dict[str, Any]:
        return await self.signing_key.jwks()

    async def metadata(self) -> dict[str, Any]:
        return {"issuer": self.config.issuer}

    async def claims_of(self, token: str) -> dict[str, Any] | None:
        """The verified claims of one of this facade's tokens, even an expired one (None when it is not ours)."""
        try:
            kid, private = await self.signing_key.get()
            header = jwt.get_unverified_header(token)
            if header.get("kid") != kid:
                return None
            return jwt.decode(token, private.public_key(), algorithms=[FACADE_ALGORITHM], issuer=self.config.issuer,
                              options={"verify_aud": False, "verify_exp": False})
        except jwt.PyJWTError:
            return None
