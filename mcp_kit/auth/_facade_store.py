"""Where the facade keeps what one step of a flow leaves for the next: the backend's key-value records.

Every record is JSON in the backend's key-value store (namespace `oauth:<kind>`, its key) with its own
TTL, so a flow works whichever process each step lands on (`--backend redis://… --workers 3`):

    client:<client id>           a dynamically registered client (RFC 7591), its secret only as a hash
    cimd:<sha256 of the URL>     a fetched client ID metadata document, for a few minutes
    pending:<id>                 an authorization in progress (the client's request, the consent's CSRF token)
    upstream:<sha256 of state>   the upstream leg (our PKCE verifier and nonce), taken once at the callback
    code:<sha256 of code>        an authorization code, taken once at the token endpoint
    code-used:<sha256>           a redeemed code's grant, so a replay revokes what it gave
    grant:<id>                   one user's authorization of one client, with the upstream tokens
    refresh:<sha256 of token>    a refresh token, taken once when it is used (rotation)
    refresh-family:<sha256>      every refresh token's grant (kept after its use), so its reuse revokes the grant
    consent:<sha256>             a user's remembered approval of a client (the scopes approved)
    signing-key                  the access-token signing key every process uses (kept for years)

Secrets (codes, refresh tokens, state) are stored under their SHA-256, never as keys themselves.
Imports nothing of mcp_kit: the backend is any object with the key-value methods of `_backends.base`
(`kv_get`, `kv_set`, `kv_take`, `kv_delete`). Each kind is bounded (`MAX_RECORDS`, `MAX_RECORD_BYTES`).

Every kind but the `cimd` cache is written `evictable=False`: the in-memory backend, which forgets its
least recently used values to make room, never forgets one of these (a forgotten refresh-token family
would let a stolen token be reused unnoticed, a forgotten signing key would end every session). It keeps
them apart within its own bound instead, and past that refuses new ones, which the facade answers with
503 `temporarily_unavailable` and a logged warning. Redis keeps every record until its TTL.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol

FOREVER = 10 * 365 * 86400.0  # the TTL of a record that has none of its own (the signing key)
MAX_RECORDS = 1_000_000  # live records of one kind (clients, grants, refresh tokens, ...)
MAX_RECORD_BYTES = 64 * 1024
CACHED_KINDS = frozenset({"cimd"})  # fetched again when forgotten: the only kinds a backend may evict


class KeyValueStore(Protocol):
    async def kv_set(self, namespace: str, key: str, value: bytes, ttl: float, *, only_new: bool = False,
                     max_value: int = ..., max_keys: int = ..., evictable: bool = ...) -> bool: ...

    async def kv_get(self, namespace: str, key: str) -> bytes | None: ...

    async def kv_take(self, namespace: str, key: str) -> bytes | None: ...

    async def kv_delete(self, namespace: str, key: str) -> None: ...


class FacadeBackend(KeyValueStore, Protocol):
    """What the facade needs of a backend: key-value records and the deployment's shared secret."""

    async def shared_secret(self) -> bytes: ...


def digest(secret: str) -> str:
    """The key a secret is stored under."""
    return hashlib.sha256(secret.encode()).hexdigest()


class FacadeStore:
    """Typed JSON records over a backend's key-value records."""

    def __init__(self, backend: KeyValueStore, namespace: str = "oauth") -> None:
        self.backend = backend
        self.namespace = namespace

    def kind(self, kind: str) -> str:
        """The key-value namespace of records of `kind`."""
        return f"{self.namespace}:{kind}"

    async def put(self, kind: str, key: str, record: dict[str, Any], ttl: float | None, *,
                  only_new: bool = False) -> bool:
        return await self.backend.kv_set(self.kind(kind), key, json.dumps(record).encode(),
                                         FOREVER if ttl is None else ttl, only_new=only_new,
                                         max_value=MAX_RECORD_BYTES, max_keys=MAX_RECORDS,
                                         evictable=kind in CACHED_KINDS)

    async def get(self, kind: str, key: str) -> dict[str, Any] | None:
        return _decoded(await self.backend.kv_get(self.kind(kind), key))

    async def take(self, kind: str, key: str) -> dict[str, Any] | None:
        return _decoded(await self.backend.kv_take(self.kind(kind), key))

    async def delete(self, kind: str, key: str) -> None:
        await self.backend.kv_delete(self.kind(kind), key)


def _decoded(data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
