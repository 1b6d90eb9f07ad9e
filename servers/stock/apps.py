"""The stock server's MCP Apps view: price history as an SVG chart with price, EPS and P/E beside it.

`get_price_history` is rendered by `ui://stock/price-chart` for hosts that declare MCP Apps (its
results stay what they are for every other host); the view changes range through `price_chart`, a
tool only the view calls (hidden from hosts without Apps).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from mcp_kit import Apps, MCPServer, ToolError
from servers._shared.views import view_html
from servers.stock.errors import ProviderError
from servers.stock.explain import error_text
from servers.stock.models import Period
from servers.stock.params import Ticker
from servers.stock.providers import StockProvider
from servers.stock.ranges import RangeError, resolve_range
from servers.stock.valuation import compare

VIEW = "ui://stock/price-chart"
PAGE = Path(__file__).resolve().parent / "views" / "price_chart.html"


def register_views(app: MCPServer, provider: StockProvider) -> Apps:
    """Add the price-chart view, link `get_price_history` to it, and add the app-only `price_chart`."""
    apps = app.add_extension(Apps())

    @apps.view(VIEW, name="price-chart", title="Price history chart", prefers_border=True)
    def price_chart_view() -> str:
        """Closing prices as a line chart (1M, 3M, 6M, 1Y) with the latest price, trailing EPS and P/E."""
        return view_html(PAGE)

    apps.link("get_price_history", VIEW)

    @apps.tool(view=VIEW, visibility=["app"], title="Price chart data", read_only=True, idempotent=True,
               open_world=not provider.is_sample)
    async def price_chart(ticker: Ticker, period: Annotated[Period, Field(description="1mo, 3mo, 6mo, 1y, ...")]
                          = "1mo") -> dict[str, Any]:
        """Daily closes over `period` and the P/E valuation of one ticker, for the price-chart view."""
        try:
            first, last = resolve_range(provider.today(), None, None, period, "1d")
            history = await provider.get_history(ticker, first, last, "1d")
            comparison = await compare(provider, [ticker])
        except RangeError as exc:
            raise ToolError(f"Invalid range: {exc}") from None
        except ProviderError as exc:
            raise ToolError(await error_text(provider, exc)) from None
        row = comparison.results[0] if comparison.results else None
        return {
            "ticker": history.ticker, "name": row.name if row else None, "period": period,
            "currency": history.currency, "points": [{"time": bar.time, "close": bar.close} for bar in history.bars],
            "valuation": row.model_dump(mode="json") if row else None, "note": comparison.note,
        }

    return apps
