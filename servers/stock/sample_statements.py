"""Financial statements for the sample provider, derived deterministically from the bundled
latest-fiscal-year figures (older years and quarters are simulated from them)."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

from servers.stock.models import FiscalPeriod, LineItem, StatementPeriod, StatementType

MILLION = 1_000_000

# statement type -> (figure key, label, unit); keys match the live provider's line-item names
STATEMENT_LINES: dict[str, list[tuple[str, str, str]]] = {
    "income_statement": [
        ("revenue", "Revenue", "USD"),
        ("net_income", "Net income", "USD"),
        ("eps_diluted", "Diluted earnings per share", "USD/share"),
        ("diluted_shares", "Weighted average diluted shares outstanding", "shares"),
    ],
    "balance_sheet": [
        ("total_assets", "Total assets", "USD"),
        ("total_liabilities", "Total liabilities", "USD"),
        ("stockholders_equity", "Stockholders' equity (assets - liabilities)", "USD"),
        ("cash", "Cash and cash equivalents", "USD"),
    ],
    "cash_flow": [
        ("operating_cash_flow", "Net cash from operating activities", "USD"),
        ("capital_expenditure", "Capital expenditure", "USD"),
        ("free_cash_flow", "Free cash flow (operating cash flow - capital expenditure)", "USD"),
    ],
}
COMPUTED = {"stockholders_equity", "free_cash_flow"}


def _years_back(day: date, years: int) -> date:
    try:
        return day.replace(year=day.year - years)
    except ValueError:  # 29 February
        return day.replace(year=day.year - years, day=28)


def _months_back(day: date, months: int) -> date:
    month_index = day.year * 12 + day.month - 1 - months
    year, month = divmod(month_index, 12)
    for candidate_day in (day.day, 30, 29, 28):
        try:
            return date(year, month + 1, candidate_day)
        except ValueError:
            continue
    raise ValueError(day)  # pragma: no cover


def _annual_figures(company: dict[str, Any], years_back: int) -> dict[str, float]:
    """Money figures in USD and shares in units for the fiscal year `years_back` before the latest."""
    ticker = company["ticker"]
    scale, earnings_scale, share_scale = 1.0, 1.0, 1.0
    for year in range(1, years_back + 1):
        rng = random.Random(f"{ticker}|growth|{year}")
        scale /= 1 + rng.gauss(0.07, 0.05)
        earnings_scale /= 1 + rng.gauss(0.09, 0.12)
        share_scale *= 1 + rng.uniform(0.0, 0.02)
    figures = {
        "revenue": company["revenue"] * scale,
        "net_income": company["net_income"] * earnings_scale,
        "diluted_shares": company["diluted_shares"] * share_scale,
        "total_assets": company["total_assets"] * scale**0.7,
        "total_liabilities": company["total_liabilities"] * scale**0.7,
        "cash": company["cash"] * scale**0.5,
        "operating_cash_flow": company["operating_cash_flow"] * scale,
        "capital_expenditure": company["capital_expenditure"] * scale,
    }
    return {key: value * MILLION for key, value in figures.items()}


def _with_computed(figures: dict[str, float], reported_eps: float | None) -> dict[str, float]:
    out = dict(figures)
    out["stockholders_equity"] = figures["total_assets"] - figures["total_liabilities"]
    out["free_cash_flow"] = figures["operating_cash_flow"] - figures["capital_expenditure"]
    eps = reported_eps if reported_eps is not None else figures["net_income"] / figures["diluted_shares"]
    out["eps_diluted"] = round(eps, 2)
    return out


def _items(statement_type: StatementType, figures: dict[str, float]) -> list[LineItem]:
    return [
        LineItem(
            name=key,
            label=label,
            value=figures[key] if unit == "USD/share" else round(figures[key]),
            unit=unit,
            concept="computed" if key in COMPUTED else None,
        )
        for key, label, unit in STATEMENT_LINES[statement_type]
    ]


def annual_periods(company: dict[str, Any], statement_type: StatementType, limit: int) -> list[FiscalPeriod]:
    latest_end = date.fromisoformat(company["fiscal_year_end"])
    periods: list[FiscalPeriod] = []
    for back in range(limit):
        end = _years_back(latest_end, back)
        start = _years_back(latest_end, back + 1) + timedelta(days=1)
        figures = _with_computed(_annual_figures(company, back), company["eps_diluted"] if back == 0 else None)
        periods.append(
            FiscalPeriod(
                fiscal_label=f"FY{company['fiscal_year'] - back}",
                start=None if statement_type == "balance_sheet" else start.isoformat(),
                end=end.isoformat(),
                form="10-K (sample)",
                items=_items(statement_type, figures),
            )
        )
    return periods


def quarterly_periods(company: dict[str, Any], statement_type: StatementType, limit: int) -> list[FiscalPeriod]:
    latest_end = date.fromisoformat(company["fiscal_year_end"])
    periods: list[FiscalPeriod] = []
    years_needed = (limit + 3) // 4
    for back in range(years_needed):
        annual = _annual_figures(company, back)
        rng = random.Random(f"{company['ticker']}|seasons|{back}")
        weights = [rng.uniform(0.8, 1.2) for _ in range(4)]
        total = sum(weights)
        for quarter in (4, 3, 2, 1):
            if len(periods) >= limit:
                return periods
            months_before_year_end = 3 * (4 - quarter)
            end = _months_back(_years_back(latest_end, back), months_before_year_end)
            start = _months_back(end, 3) + timedelta(days=1)
            share = weights[quarter - 1] / total
            figures = {
                key: (value * share if key not in {"diluted_shares", "total_assets", "total_liabilities", "cash"}
                      else value * (1 - 0.01 * months_before_year_end / 3))
                for key, value in annual.items()
            }
            periods.append(
                FiscalPeriod(
                    fiscal_label=f"Q{quarter} FY{company['fiscal_year'] - back}",
                    start=None if statement_type == "balance_sheet" else start.isoformat(),
                    end=end.isoformat(),
                    form="10-Q (sample)" if quarter != 4 else "10-K (sample)",
                    items=_items(statement_type, _with_computed(figures, None)),
                )
            )
    return periods


def statement_periods(
    company: dict[str, Any], statement_type: StatementType, period: StatementPeriod, limit: int
) -> list[FiscalPeriod]:
    """Newest-first periods of one sample statement."""
    if period == "annual":
        return annual_periods(company, statement_type, limit)
    return quarterly_periods(company, statement_type, limit)
