"""SEC EDGAR: company_tickers.json (ticker -> CIK) and XBRL company facts -> statements and EPS."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from servers.stock.models import Company, EarningsFigure, FiscalPeriod, LineItem, StatementPeriod, StatementType

SOURCE = "SEC EDGAR XBRL company facts"
TICKERS_SOURCE = "SEC EDGAR company tickers"
DEFAULT_WWW = "https://www.sec.gov"
DEFAULT_DATA = "https://data.sec.gov"
ANNUAL_DAYS, QUARTER_DAYS = (350, 380), (80, 100)

# statement -> (line name, label, candidate us-gaap concepts (first with a value wins), unit)
LINES: dict[str, list[tuple[str, str, tuple[str, ...], str]]] = {
    "income_statement": [
        ("revenue", "Revenue", ("RevenueFromContractWithCustomerExcludingAssessedTax", "Revenues",
                                "SalesRevenueNet", "RevenueFromContractWithCustomerIncludingAssessedTax"), "USD"),
        ("gross_profit", "Gross profit", ("GrossProfit",), "USD"),
        ("operating_income", "Operating income", ("OperatingIncomeLoss",), "USD"),
        ("net_income", "Net income", ("NetIncomeLoss",), "USD"),
        ("eps_basic", "Basic earnings per share", ("EarningsPerShareBasic",), "USD/shares"),
        ("eps_diluted", "Diluted earnings per share", ("EarningsPerShareDiluted",), "USD/shares"),
        ("diluted_shares", "Weighted average diluted shares outstanding",
         ("WeightedAverageNumberOfDilutedSharesOutstanding",), "shares"),
    ],
    "balance_sheet": [
        ("total_assets", "Total assets", ("Assets",), "USD"),
        ("current_assets", "Current assets", ("AssetsCurrent",), "USD"),
        ("cash", "Cash and cash equivalents", ("CashAndCashEquivalentsAtCarryingValue",), "USD"),
        ("total_liabilities", "Total liabilities", ("Liabilities",), "USD"),
        ("current_liabilities", "Current liabilities", ("LiabilitiesCurrent",), "USD"),
        ("long_term_debt", "Long-term debt, non-current", ("LongTermDebtNoncurrent",), "USD"),
        ("stockholders_equity", "Stockholders' equity", ("StockholdersEquity",), "USD"),
    ],
    "cash_flow": [
        ("operating_cash_flow", "Net cash from operating activities",
         ("NetCashProvidedByUsedInOperatingActivities",), "USD"),
        ("investing_cash_flow", "Net cash from investing activities",
         ("NetCashProvidedByUsedInInvestingActivities",), "USD"),
        ("financing_cash_flow", "Net cash from financing activities",
         ("NetCashProvidedByUsedInFinancingActivities",), "USD"),
        ("capital_expenditure", "Capital expenditure", ("PaymentsToAcquirePropertyPlantAndEquipment",), "USD"),
    ],
}
NEEDED_CONCEPTS = {c for lines in LINES.values() for line in lines for c in line[2]}


def parse_company_tickers(body: Any) -> list[Company]:
    """company_tickers.json ({"0": {"cik_str", "ticker", "title"}, ...}) in SEC's order."""
    rows = sorted(body.items(), key=lambda item: int(item[0])) if isinstance(body, dict) else []
    return [Company(ticker=str(row["ticker"]).upper(), name=row["title"]) for _, row in rows]


def cik_by_ticker(body: Any) -> dict[str, int]:
    return {str(row["ticker"]).upper(): int(row["cik_str"]) for row in (body or {}).values()}


def companyfacts_url(base: str, cik: int) -> str:
    return f"{base}/api/xbrl/companyfacts/CIK{cik:010d}.json"


def tickers_url(base: str) -> str:
    return f"{base}/files/company_tickers.json"


def slim_facts(body: dict[str, Any]) -> dict[str, Any]:
    """Keep only the us-gaap concepts this server reads (company facts bodies are megabytes)."""
    gaap = (body.get("facts") or {}).get("us-gaap") or {}
    return {"entityName": body.get("entityName"), "us-gaap": {k: v for k, v in gaap.items() if k in NEEDED_CONCEPTS}}


@dataclass
class Fact:
    start: date | None
    end: date
    value: float
    fy: int | None
    fp: str | None
    form: str
    filed: str


def _facts(facts: dict[str, Any], concept: str, unit: str) -> list[Fact]:
    units = ((facts.get("us-gaap") or {}).get(concept) or {}).get("units") or {}
    return [
        Fact(date.fromisoformat(e["start"]) if e.get("start") else None, date.fromisoformat(e["end"]), e["val"],
             e.get("fy"), e.get("fp"), e.get("form", ""), e.get("filed", ""))
        for e in units.get(unit, [])
    ]


def _fits(fact: Fact, period: StatementPeriod, instant: bool) -> bool:
    if instant:
        return fact.start is None and (period == "quarterly" or fact.form.startswith("10-K"))
    if fact.start is None:
        return False
    low, high = ANNUAL_DAYS if period == "annual" else QUARTER_DAYS
    return low <= (fact.end - fact.start).days <= high


def _label(first: Fact, period: StatementPeriod) -> str:
    if first.fy is None or not first.fp:
        return f"period ending {first.end.isoformat()}"
    if first.fp == "FY":
        return f"FY{first.fy}" if period == "annual" else f"Q4 FY{first.fy} (fiscal year end)"
    return f"{first.fp} FY{first.fy}"


def statement_periods(
    facts: dict[str, Any], statement_type: StatementType, period: StatementPeriod, limit: int
) -> list[FiscalPeriod]:
    """Newest-first periods; each value is the latest filed figure for that exact period."""
    instant = statement_type == "balance_sheet"
    values: dict[tuple, dict[str, tuple[Fact, str, str]]] = {}
    first_seen: dict[tuple, Fact] = {}
    latest: dict[tuple, Fact] = {}
    for name, _label_text, concepts, unit in LINES[statement_type]:
        for concept in concepts:
            for fact in _facts(facts, concept, unit):
                if not _fits(fact, period, instant):
                    continue
                key = (fact.start, fact.end)
                slot = values.setdefault(key, {})
                held = slot.get(name)
                if held is None or (held[1] == concept and fact.filed >= held[0].filed):
                    slot[name] = (fact, concept, unit)
                if key not in first_seen or fact.filed < first_seen[key].filed:
                    first_seen[key] = fact
                if key not in latest or fact.filed > latest[key].filed:
                    latest[key] = fact
    keys = sorted(values, key=lambda k: (k[1], k[0] or k[1]), reverse=True)[:limit]
    labels = {name: text for name, text, _c, _u in LINES[statement_type]}
    return [
        FiscalPeriod(
            fiscal_label=_label(first_seen[key], period),
            start=key[0].isoformat() if key[0] else None,
            end=key[1].isoformat(),
            form=latest[key].form,
            filed=latest[key].filed,
            items=[
                LineItem(name=name, label=labels[name], value=fact.value,
                         unit="USD/share" if unit == "USD/shares" else unit, concept=f"us-gaap:{concept}")
                for name, (fact, concept, unit) in sorted(values[key].items(), key=lambda i: list(labels).index(i[0]))
            ],
        )
        for key in keys
    ]


def _near(a: date, b: date, days: int = 7) -> bool:
    return abs((a - b).days) <= days


def trailing_eps(facts: dict[str, Any]) -> EarningsFigure | None:
    """Trailing-twelve-month diluted EPS: latest fiscal year, plus the year-to-date reported since,
    minus the same year-to-date a year earlier. None when no annual diluted EPS was filed."""
    eps: dict[tuple, Fact] = {}
    first_filed: dict[tuple, Fact] = {}
    for fact in _facts(facts, "EarningsPerShareDiluted", "USD/shares"):
        if fact.start is None:
            continue
        key = (fact.start, fact.end)
        if key not in eps or fact.filed >= eps[key].filed:
            eps[key] = fact
        if key not in first_filed or fact.filed < first_filed[key].filed:
            first_filed[key] = fact
    annual = sorted((f for f in eps.values() if _fits(f, "annual", False)), key=lambda f: f.end)
    if not annual:
        return None
    year = annual[-1]
    durations = [(f.start, f) for f in eps.values() if f.start is not None]
    after = [f for start, f in durations if _near(start, year.end + timedelta(days=1)) and f.end > year.end]
    original = first_filed[(year.start, year.end)]
    fy_label = f"FY{original.fy}" if original.fp == "FY" and original.fy else f"fiscal year ending {year.end}"
    if after:
        ytd = max(after, key=lambda f: f.end)
        ytd_start = ytd.start or ytd.end
        earlier = [f for start, f in durations if _near(f.end, ytd.end - timedelta(days=364))
                   and _near(start, ytd_start - timedelta(days=364))]
        if earlier:
            prior = earlier[0]
            return EarningsFigure(
                value=round(year.value + ytd.value - prior.value, 4),
                basis=f"{fy_label} (ended {year.end}) + year-to-date to {ytd.end} ({ytd.value:g}) "
                      f"- same period a year earlier to {prior.end} ({prior.value:g})",
                period_end=ytd.end.isoformat(), source=SOURCE,
            )
    return EarningsFigure(value=year.value, basis=f"{fy_label} annual diluted EPS (ended {year.end}; latest reported)",
                          period_end=year.end.isoformat(), source=SOURCE)
