"""Ticker lookup helpers shared by search, did-you-mean suggestions and completion."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from servers.stock.models import Company, TickerMatch

_NAME_NOISE = re.compile(r"[^a-z0-9 ]+")


def normalize_ticker(raw: str) -> str:
    """Upper-case a user-typed symbol and use the dash form for share classes (BRK.B -> BRK-B)."""
    return raw.strip().upper().replace(".", "-").replace("/", "-")


def _simple_name(name: str) -> str:
    return _NAME_NOISE.sub(" ", name.lower()).strip()


def _name_matches_prefix(name: str, prefix: str) -> bool:
    simple = _simple_name(name)
    wanted = _simple_name(prefix)
    if not wanted:
        return False
    return simple.startswith(wanted) or any(word.startswith(wanted) for word in simple.split())


def complete_tickers(value: str, companies: Sequence[Company], limit: int = 100) -> list[str]:
    """Tickers completing `value`: ticker-prefix matches first (exact one first), then name matches."""
    prefix = normalize_ticker(value)
    exact = [c.ticker for c in companies if c.ticker == prefix]
    by_ticker = [c.ticker for c in companies if c.ticker.startswith(prefix) and c.ticker != prefix]
    seen = set(exact) | set(by_ticker)
    by_name = [c.ticker for c in companies if c.ticker not in seen and _name_matches_prefix(c.name, value)]
    return (exact + by_ticker + by_name)[:limit]


def search_companies(query: str, companies: Sequence[Company], limit: int = 10) -> list[TickerMatch]:
    """Companies matching a name or partial ticker, best first; falls back to fuzzy matching."""
    matches: list[TickerMatch] = []
    seen: set[str] = set()

    def add(company: Company, matched_on: str) -> None:
        if company.ticker not in seen and len(matches) < limit:
            seen.add(company.ticker)
            matches.append(
                TickerMatch(ticker=company.ticker, name=company.name, exchange=company.exchange, matched_on=matched_on)  # type: ignore[arg-type]
            )

    symbol = normalize_ticker(query)
    wanted = _simple_name(query)
    for company in companies:
        if company.ticker == symbol:
            add(company, "ticker")
    for company in companies:
        if company.ticker.startswith(symbol):
            add(company, "ticker")
    for company in companies:
        if _name_matches_prefix(company.name, query):
            add(company, "name")
    if wanted:
        for company in companies:
            if wanted in _simple_name(company.name):
                add(company, "name")
    if not matches:
        for company in suggest_companies(query, companies, limit=limit):
            add(company, "fuzzy")
    return matches


def suggest_companies(wrong: str, companies: Sequence[Company], limit: int = 3) -> list[Company]:
    """Did-you-mean candidates for an unknown ticker, by similarity to tickers and to names."""
    by_ticker = {c.ticker: c for c in companies}
    by_name: dict[str, Company] = {}
    for company in companies:
        by_name.setdefault(_simple_name(company.name), company)
    found: list[Company] = []
    for ticker in difflib.get_close_matches(normalize_ticker(wrong), list(by_ticker), n=limit, cutoff=0.6):
        found.append(by_ticker[ticker])
    for name in difflib.get_close_matches(_simple_name(wrong), list(by_name), n=limit, cutoff=0.6):
        if by_name[name] not in found:
            found.append(by_name[name])
    for company in companies:
        if len(found) >= limit:
            break
        if company not in found and _name_matches_prefix(company.name, wrong):
            found.append(company)
    return found[:limit]


def describe_suggestions(companies: Sequence[Company]) -> str:
    """'AAPL (Apple Inc.)' or 'AAPL (Apple Inc.) or AMAT (Applied Materials)'."""
    parts = [f"{c.ticker} ({c.name})" for c in companies]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " or " + parts[-1]
