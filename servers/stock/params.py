"""Parameter types shared by the stock server's tools, resource templates and prompts.

One definition of each parameter's constraints: mcp_kit validates a resource template's URI
variables exactly like tool arguments, so `stock://quote/{ticker}` refuses what `get_stock_price`
refuses (`..`, `/`, backslashes, percent-encoded tricks once decoded, 5000-character values)
before any call to the data source.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

# Letters, digits, ^ = - in dot-separated parts: 'AAPL', 'BRK.B', 'BRK-B', '^GSPC', 'EURUSD=X'; never '..' or '/'.
TICKER_PATTERN = r"^[A-Za-z0-9^=-]+(?:\.[A-Za-z0-9^=-]+)*$"
TICKER_MAX_LENGTH = 15

TickerSymbol = Annotated[str, Field(min_length=1, max_length=TICKER_MAX_LENGTH, pattern=TICKER_PATTERN)]
"""A ticker symbol's constraints alone (for list items and prompt arguments with their own description)."""

Ticker = Annotated[TickerSymbol, Field(
    description="Ticker symbol as listed, e.g. 'AAPL', 'MSFT', 'BRK-B' (case-insensitive; 'BRK.B' also works). "
                "Not a company name: use search_ticker to turn a name into a ticker.",
)]
"""A ticker argument or template variable."""
