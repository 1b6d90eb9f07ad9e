"""`JsonFetcher`: GET JSON through one shared httpx client, retrying what may pass on a second try.

Timeouts, unreachable hosts, HTTP 429 and 5xx are retried with exponential backoff (capped), and
a `Retry-After` longer than the backoff is honoured (one longer than the cap ends the retries at
once). A 2xx answer, or a 4xx other than 429, is returned as a `JsonResponse` for the caller to
interpret (a 404 can be an answer). What still fails after the last attempt is raised as a
`FetchFailure` saying what went wrong. This is the only module that sees httpx errors. Each request
carries the W3C trace context of the MCP request it serves (`traceparent`, `tracestate`), so an
upstream that traces continues the trace.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import httpx

from mcp_kit import current_trace_headers

logger = logging.getLogger("servers.fetch")

FailureKind = Literal["timeout", "unreachable", "rate_limited", "server_error", "not_json"]


@dataclass(frozen=True)
class JsonResponse:
    """An answer: its status, its JSON body (None when a 4xx body is not JSON) and its text."""

    status: int
    data: Any
    text: str

    def reason(self) -> str:
        """Why a source refused (Open-Meteo `reason`, problem+json `detail`/`title`, `message`), else the text."""
        if isinstance(self.data, dict):
            for field in ("reason", "detail", "title", "message"):
                value = self.data.get(field)
                if isinstance(value, str) and value.strip():
                    return value.strip()
        if self.data is not None:
            return str(self.data)[:200]
        return self.text.strip()[:200]


class FetchFailure(Exception):
    """A GET that failed for good: `kind` says how, `attempts` how often it was tried."""

    def __init__(self, kind: FailureKind, source: str, *, attempts: int, status: int | None = None,
                 retry_after: float | None = None, error: BaseException | None = None) -> None:
        super().__init__(
            f"{source}: {kind}" + (f" (HTTP {status})" if status else "") + f" after {attempts} attempt(s)"
        )
        self.kind = kind
        self.source = source
        self.attempts = attempts
        self.status = status
        self.retry_after = retry_after
        self.error = error


def retry_after_seconds(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class JsonFetcher:
    """GET JSON documents (see the module docstring). `sleep` is injectable so tests need not wait."""

    def __init__(self, client: httpx.AsyncClient, *, attempts: int = 3, backoff: float = 0.5, backoff_cap: float = 8.0,
                 sleep: Callable[[float], Awaitable[None]] = anyio.sleep) -> None:
        self.client = client
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self.backoff_cap = backoff_cap
        self.sleep = sleep

    async def get(self, url: str, *, source: str, params: Mapping[str, Any] | None = None,
                  headers: Mapping[str, str] | None = None) -> JsonResponse:
        failure: FetchFailure | None = None
        for attempt in range(1, self.attempts + 1):
            if failure is not None:
                delay = min(self.backoff_cap, self.backoff * 2 ** (attempt - 2))
                if failure.retry_after is not None:
                    delay = max(delay, failure.retry_after)
                logger.info("%s: retrying %s in %.2f s after: %s", source, url, delay, failure)
                await self.sleep(delay)
            try:
                response = await self.client.get(url, params=dict(params or {}),
                                                 headers={**current_trace_headers(), **(headers or {})})
            except httpx.TimeoutException as exc:
                failure = FetchFailure("timeout", source, attempts=attempt, error=exc)
                continue
            except httpx.TransportError as exc:
                failure = FetchFailure("unreachable", source, attempts=attempt, error=exc)
                continue
            if response.status_code == 429:
                retry_after = retry_after_seconds(response)
                failure = FetchFailure("rate_limited", source, attempts=attempt, status=429, retry_after=retry_after)
                if retry_after is not None and retry_after > self.backoff_cap:
                    break  # the source asks for longer than this caller should wait
                continue
            if response.status_code >= 500:
                failure = FetchFailure("server_error", source, attempts=attempt, status=response.status_code)
                continue
            try:
                data = response.json()
            except ValueError:
                if response.is_success:
                    raise FetchFailure("not_json", source, attempts=attempt, status=response.status_code) from None
                data = None
            return JsonResponse(response.status_code, data, response.text)
        assert failure is not None
        raise failure
