"""The issuer's signing keys (a JWK Set), cached, refreshed when a token names a key we do not know.

Keys are fetched on first use and again after `max_age`. A token signed with an unknown `kid`
(the issuer rotated its keys) triggers a refresh, at most once per `refresh_interval`, so a flood
of tokens with made-up key ids cannot turn into a flood of requests to the issuer. Concurrent
refreshes share one fetch. A failed fetch keeps the keys we had. Keys that are not for signatures
(`use` other than `sig`) or whose type PyJWT cannot load are skipped.

Imports nothing from mcp_kit but `auth.errors`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import jwt

from ._errors import AuthServerUnavailable, InvalidToken

logger = logging.getLogger("mcp_kit.auth")

Fetch = Callable[[], Awaitable[dict[str, Any]]]


class KeySet:
    """A cached JWK Set behind one fetch function."""

    def __init__(self, fetch: Fetch, *, refresh_interval: float = 30.0, max_age: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._fetch = fetch
        self.refresh_interval = refresh_interval
        self.max_age = max_age
        self._clock = clock
        self._keys: dict[str | None, dict[str, Any]] = {}
        self._loaded: dict[tuple[str | None, str], jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._lock = anyio.Lock()
        self.fetches = 0

    async def key(self, kid: str | None, alg: str) -> jwt.PyJWK:
        """The key for a token header's `kid` and `alg`; InvalidToken when the issuer publishes none."""
        if self._fetched_at is None or self._age() >= self.max_age:
            await self._refresh(initial=self._fetched_at is None)
        found = self._pick(kid, alg)
        if found is None and self._age() >= self.refresh_interval:
            await self._refresh(initial=False)
            found = self._pick(kid, alg)
        if found is None:
            if not self._keys:
                raise AuthServerUnavailable(
                    "the authorization server's signing keys are not available; try again later"
                )
            raise InvalidToken("the access token is signed with a key the issuer does not publish")
        return found

    def _age(self) -> float:
        return float("inf") if self._fetched_at is None else self._clock() - self._fetched_at

    def _pick(self, kid: str | None, alg: str) -> jwt.PyJWK | None:
        if (kid, alg) in self._loaded:
            return self._loaded[(kid, alg)]
        if kid is not None:
            entry = self._keys.get(kid)
        else:  # no kid: only unambiguous when one key fits the algorithm
            fitting = [k for k in self._keys.values() if _fits(k, alg)]
            entry = fitting[0] if len(fitting) == 1 else None
        if entry is None or not _fits(entry, alg):
            return None
        try:
            key = jwt.PyJWK(entry, algorithm=alg)
        except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
            return None
        self._loaded[(kid, alg)] = key
        return key

    async def _refresh(self, *, initial: bool) -> None:
        started = self._clock()
        async with self._lock:
            if self._fetched_at is not None and self._fetched_at >= started:
                return  # another task refreshed while we waited
            if not initial and self._age() < self.refresh_interval:
                return
            self.fetches += 1
            try:
                document = await self._fetch()
            except Exception as exc:
                self._fetched_at = self._clock()  # failures are rate-limited too
                if self._keys:
                    logger.warning(
                        "could not refresh the issuer's signing keys (keeping %d known): %s", len(self._keys), exc
                    )
                    return
                raise AuthServerUnavailable(
                    f"the authorization server's signing keys could not be fetched: {exc}"
                ) from None
            self._keys = parse_key_set(document)
            self._loaded = {}
            self._fetched_at = self._clock()
            logger.info("loaded %d signing key(s) from the issuer", len(self._keys))


def parse_key_set(document: dict[str, Any]) -> dict[str | None, dict[str, Any]]:
    """The public signature keys of a JWK Set document that PyJWT can load, by `kid`."""
    keys: dict[str | None, dict[str, Any]] = {}
    entries = document.get("keys") if isinstance(document, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig" or entry.get("kty") not in FAMILY.values():
            continue
        if any(part in entry for part in ("d", "p", "q", "k")):
            continue  # private or symmetric material has no place in a published key set
        try:
            jwt.PyJWK(entry)
        except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
            continue
        keys[entry.get("kid")] = entry
    return keys


FAMILY = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}


def _fits(entry: dict[str, Any], alg: str) -> bool:
    """Whether a JWK may verify a signature made with `alg` (its own `alg`, when it names one, must agree)."""
    declared = entry.get("alg")
    if declared is not None and declared != alg:
        return False
    return FAMILY.get(alg[:2]) == entry.get("kty")
