"""JSON from the weather sources: the shared fetcher and cache (`servers._shared`), and the one place
their failures become weather errors (SourceTimeout, SourceUnavailable or SourceRejected)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import httpx

from servers._shared.cache import TTLCache
from servers._shared.fetch import FetchFailure, JsonFetcher

from .errors import SourceError, SourceRejected, SourceTimeout, SourceUnavailable

OFFLINE_HINT = ("If this machine is offline, the server can run on generated sample data instead: start it with "
                "--provider sample (or WEATHER_PROVIDER=sample).")


def _attempts(count: int) -> str:
    return f"{count} attempt{'s' if count > 1 else ''}"


def weather_error(failure: FetchFailure) -> SourceError:
    """The weather error for a GET that failed for good, in this server's words."""
    source, tries = failure.source, _attempts(failure.attempts)
    if failure.kind == "timeout":
        return SourceTimeout(f"The weather source {source} timed out ({type(failure.error).__name__}, {tries}).",
                             hint=OFFLINE_HINT)
    if failure.kind == "unreachable":
        error = failure.error
        return SourceUnavailable(f"The weather source {source} could not be reached ({type(error).__name__}: {error}; "
                                 f"{tries}).", hint=OFFLINE_HINT)
    if failure.kind == "not_json":
        return SourceUnavailable(f"The weather source {source} sent a response that is not JSON ({tries}).")
    return SourceUnavailable(f"The weather source {source} is unavailable (HTTP {failure.status}, {tries}).")


class WeatherSources:
    """GET JSON documents from the weather sources, retrying transient failures and caching successes."""

    def __init__(self, client: httpx.AsyncClient, *, retries: int = 2, backoff: float = 0.5,
                 sleep: Callable[[float], Awaitable[None]] = anyio.sleep, cache: TTLCache | None = None) -> None:
        self.fetcher = JsonFetcher(client, attempts=retries + 1, backoff=backoff, sleep=sleep)
        self.cache = cache if cache is not None else TTLCache()

    async def get_json(self, source: str, url: str, params: Mapping[str, Any], *, ttl: float,
                       headers: Mapping[str, str] | None = None) -> Any:
        """The decoded JSON body of GET url?params, from cache while fresh."""
        key = (url, tuple(sorted((k, str(v)) for k, v in params.items())))
        return await self.cache.get(key, ttl, lambda: self._get(source, url, params, headers))

    async def _get(self, source: str, url: str, params: Mapping[str, Any], headers: Mapping[str, str] | None) -> Any:
        try:
            response = await self.fetcher.get(url, source=source, params=params, headers=headers)
        except FetchFailure as failure:
            raise weather_error(failure) from failure.error
        if response.status >= 400:
            raise SourceRejected(f"The weather source {source} rejected the request (HTTP {response.status}): "
                                 f"{response.reason() or 'no reason given'}.")
        return response.data
