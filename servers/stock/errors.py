"""Provider-level exceptions: every data-source failure is translated into one of these once,
at the HTTP boundary, so the server can turn it into an error text a model can act on."""

from __future__ import annotations


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
