"""HTTP boundary for the live provider: JSON GETs with timeouts, retry with backoff on 429/5xx,
a TTL cache, and the one place where httpx errors become provider exceptions."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from servers.stock.errors import ProviderError, RateLimited, SourceTimeout, SourceUnavailable

log = logging.getLogger(__name__)


@dataclass
class JsonResponse:
    """A parsed answer: 2xx, or a 4xx (other than 429) the caller interprets (e.g. Yahoo's 404)."""

    status: int
    data: Any


def _retry_after_seconds(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _parse_json(response: httpx.Response, source: str) -> Any:
    try:
        return response.json()
    except ValueError:
        if response.is_success:
            raise SourceUnavailable(
                f"{source} answered HTTP {response.status_code} with a body that is not JSON.", source=source
            ) from None
        return None


class JsonFetcher:
    """GET JSON through one shared httpx.AsyncClient. `sleep` is injectable so tests need not wait."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        max_attempts: int = 3,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        self.client = client
        self.max_attempts = max_attempts
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.sleep = sleep

    async def get_json(
        self, url: str, *, source: str, params: dict[str, Any] | None = None, headers: dict[str, str] | None = None
    ) -> JsonResponse:
        failure: ProviderError | None = None
        attempt = 0
        for attempt in range(self.max_attempts):
            if attempt:
                delay = min(self.backoff_cap, self.backoff_base * 2 ** (attempt - 1))
                if isinstance(failure, RateLimited) and failure.retry_after is not None:
                    delay = max(delay, failure.retry_after)
                log.info("retrying %s in %.2fs after: %s", url, delay, failure)
                await self.sleep(delay)
            try:
                response = await self.client.get(url, params=params, headers=headers)
            except httpx.TimeoutException:
                failure = SourceTimeout(f"{source} did not answer in time", source=source)
                continue
            except httpx.TransportError as exc:
                failure = SourceUnavailable(f"{source} could not be reached ({type(exc).__name__})", source=source)
                continue
            if response.status_code == 429:
                retry_after = _retry_after_seconds(response)
                failure = RateLimited(f"{source} is rate limiting requests (HTTP 429)", source=source,
                                      retry_after=retry_after)
                if retry_after is not None and retry_after > self.backoff_cap:
                    break
                continue
            if response.status_code >= 500:
                failure = SourceUnavailable(f"{source} had a server error (HTTP {response.status_code})",
                                            source=source)
                continue
            return JsonResponse(response.status_code, _parse_json(response, source))
        assert failure is not None
        if isinstance(failure, RateLimited) and failure.retry_after is not None:
            failure.message += f"; it asked to wait {failure.retry_after:g} s"
        failure.message += f" (tried {attempt + 1} time{'s' if attempt else ''})"
        failure.args = (failure.message,)
        raise failure


class TTLCache:
    """Async memo with a time-to-live per entry; concurrent loads of one key run once."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._values: dict[Any, tuple[float, Any]] = {}
        self._locks: dict[Any, anyio.Lock] = {}

    async def get(self, key: Any, ttl: float, load: Callable[[], Awaitable[Any]]) -> Any:
        cached = self._values.get(key)
        if cached is not None and cached[0] > self.clock():
            return cached[1]
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            cached = self._values.get(key)
            if cached is not None and cached[0] > self.clock():
                return cached[1]
            value = await load()
            self._values[key] = (self.clock() + ttl, value)
            return value
