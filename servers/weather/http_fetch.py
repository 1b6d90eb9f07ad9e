"""JSON over HTTP for the live provider: one shared client, retries with backoff, TTL cache.

This is the only module that sees httpx errors; they leave it as SourceTimeout, SourceUnavailable
or SourceRejected.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import httpx

from .errors import SourceRejected, SourceTimeout, SourceUnavailable
from .ttl_cache import TTLCache

logger = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
OFFLINE_HINT = ("If this machine is offline, the server can run on generated sample data instead: start it with "
                "--provider sample (or WEATHER_PROVIDER=sample).")


class JsonFetcher:
    """GET JSON documents, retrying transient failures and caching successes."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        retries: int = 2,
        backoff: float = 0.5,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        cache: TTLCache | None = None,
    ) -> None:
        self.client = client
        self.retries = retries
        self.backoff = backoff
        self._sleep = sleep
        self.cache = cache if cache is not None else TTLCache()

    async def get_json(
        self, source: str, url: str, params: Mapping[str, Any], *, ttl: float, headers: Mapping[str, str] | None = None
    ) -> Any:
        """Return the decoded JSON body of GET url?params, from cache when fresh."""
        key = (url, tuple(sorted((k, str(v)) for k, v in params.items())))
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        body = await self._get_with_retries(source, url, params, headers)
        self.cache.put(key, body, ttl)
        return body

    async def _get_with_retries(
        self, source: str, url: str, params: Mapping[str, Any], headers: Mapping[str, str] | None
    ) -> Any:
        attempts = self.retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return await self._get_once(source, url, params, headers, attempts)
            except (SourceTimeout, SourceUnavailable) as error:
                if attempt == attempts:
                    raise
                delay = self.backoff * 2 ** (attempt - 1)
                logger.warning("%s attempt %d/%d failed (%s); retrying in %.2fs", source, attempt, attempts, error, delay)
                await self._sleep(delay)
        raise AssertionError("unreachable")

    async def _get_once(
        self, source: str, url: str, params: Mapping[str, Any], headers: Mapping[str, str] | None, attempts: int
    ) -> Any:
        """One GET; failures leave as SourceTimeout / SourceUnavailable (retryable) or SourceRejected."""
        tries = f"{attempts} attempt{'s' if attempts > 1 else ''}"
        try:
            response = await self.client.get(url, params=dict(params), headers=dict(headers or {}))
        except httpx.TimeoutException as error:
            raise SourceTimeout(f"The weather source {source} timed out ({type(error).__name__}, {tries}).",
                                hint=OFFLINE_HINT) from error
        except httpx.TransportError as error:
            raise SourceUnavailable(f"The weather source {source} could not be reached ({type(error).__name__}: {error}; {tries}).",
                                    hint=OFFLINE_HINT) from error
        if response.status_code in RETRYABLE_STATUS:
            raise SourceUnavailable(f"The weather source {source} is unavailable (HTTP {response.status_code}, {tries}).")
        if response.status_code >= 400:
            raise SourceRejected(f"The weather source {source} rejected the request (HTTP {response.status_code}): {_reason(response)}.")
        try:
            return response.json()
        except ValueError as error:
            raise SourceUnavailable(f"The weather source {source} sent a response that is not JSON ({tries}).") from error


def _reason(response: httpx.Response) -> str:
    """The reason an API gave for refusing: Open-Meteo 'reason', NWS problem+json 'detail'/'title', else text."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:200] or response.reason_phrase
    if isinstance(body, dict):
        for field in ("reason", "detail", "title", "message"):
            if isinstance(body.get(field), str) and body[field].strip():
                return body[field].strip()
    return str(body)[:200]
