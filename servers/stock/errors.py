"""Provider-level exceptions: every data-source failure is translated into one of these once,
at the HTTP boundary (`from_fetch_failure`), so the server can turn it into an error text a model
can act on."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # httpx, which fetch imports, loads only with the live provider
    from servers._shared.fetch import FetchFailure


class ProviderError(Exception):
    """Base class for data-source failures. `retryable` says whether trying again may help."""

    retryable: bool = False

    def __init__(self, message: str, *, source: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.source = source


class UnknownTicker(ProviderError):
    """The data source does not know this symbol."""

    def __init__(self, ticker: str, *, source: str = "", detail: str = "") -> None:
        super().__init__(f"No ticker '{ticker}'" + (f" ({detail})" if detail else ""), source=source)
        self.ticker = ticker
        self.detail = detail


class NoData(ProviderError):
    """The symbol exists but the source has no data for what was asked (empty range, no filings)."""


class SourceTimeout(ProviderError):
    """The data source did not answer in time."""

    retryable = True


class RateLimited(ProviderError):
    """The data source refused the request because of too many requests."""

    retryable = True

    def __init__(self, message: str, *, source: str = "", retry_after: float | None = None) -> None:
        super().__init__(message, source=source)
        self.retry_after = retry_after


class SourceUnavailable(ProviderError):
    """The data source is down, unreachable or answered with a server error."""

    retryable = True


class SourceRejected(ProviderError):
    """The data source refused the request itself (4xx other than 404/429); retrying will not help."""


def from_fetch_failure(failure: FetchFailure) -> ProviderError:
    """The provider error for a GET that failed for good, in this server's words."""
    source = failure.source
    tried = f" (tried {failure.attempts} time{'s' if failure.attempts > 1 else ''})"
    if failure.kind == "timeout":
        return SourceTimeout(f"{source} did not answer in time{tried}", source=source)
    if failure.kind == "unreachable":
        return SourceUnavailable(
            f"{source} could not be reached ({type(failure.error).__name__}){tried}", source=source
        )
    if failure.kind == "rate_limited":
        asked = f"; it asked to wait {failure.retry_after:g} s" if failure.retry_after is not None else ""
        return RateLimited(f"{source} is rate limiting requests (HTTP 429){asked}{tried}", source=source,
                           retry_after=failure.retry_after)
    if failure.kind == "server_error":
        return SourceUnavailable(f"{source} had a server error (HTTP {failure.status}){tried}", source=source)
    return SourceUnavailable(f"{source} answered HTTP {failure.status} with a body that is not JSON.", source=source)
