"""Printing for the demo: headings, indented blocks, one-line summaries of results."""

from __future__ import annotations

import json
import textwrap
from typing import Any

INDENT = "    "


def first_line(text: str | None, width: int) -> str:
    """A description's first line, cut to `width` characters."""
    line = (text or "").strip().split("\n")[0]
    return line if len(line) <= width else line[: width - 1] + "…"


def heading(number: int, title: str) -> None:
    print(f"\n{number}. {title}")


def say(text: str, indent: str = "  ") -> None:
    print(textwrap.indent(text, indent))


def call_line(server: str, tool: str, arguments: dict[str, Any]) -> str:
    return f"-> {server}.{tool}({json.dumps(arguments, ensure_ascii=False)})"


def model_text(result: dict[str, Any], max_lines: int = 8) -> str:
    """The text a model receives from a tool result, cut to `max_lines`."""
    text = "\n".join(block.get("text", f"[{block.get('type')}]") for block in result.get("content") or [])
    lines = text.splitlines()
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more lines)"]
    return "\n".join(lines)


def tool_table(tools: list[dict[str, Any]]) -> str:
    width = max(len(tool["name"]) for tool in tools)
    return "\n".join(f"{tool['name']:<{width}}  {first_line(tool.get('description'), 80)}" for tool in tools)


def quote_line(quote: dict[str, Any]) -> str:
    return (
        f"{quote['ticker']} ({quote['name']}): {quote['price']:.2f} {quote['currency']} "
        f"({quote['change']:+.2f}, {quote['change_percent']:+.2f}%), source {quote['source']}, as of {quote['as_of']}"
    )


def valuation_table(comparison: dict[str, Any]) -> str:
    rows = [f"{'ticker':<7}{'price':>9}{'EPS (TTM)':>11}{'P/E':>8}"]
    for row in comparison["results"]:
        pe = f"{row['pe_ratio']:.1f}" if row.get("pe_ratio") is not None else "n/a"
        eps = f"{row['eps_diluted_ttm']:.2f}" if row.get("eps_diluted_ttm") is not None else "n/a"
        rows.append(f"{row['ticker']:<7}{row['price']:>9.2f}{eps:>11}{pe:>8}")
    rows.append(f"lowest to highest P/E: {', '.join(comparison['ranking_by_pe'])}")
    return "\n".join(rows)


def weather_line(current: dict[str, Any]) -> str:
    place, units = current["location"], current["units"]
    return (f"{place['name']}, {place['country']}: {current['temperature']:g} {units['temperature']}, "
            f"{current['condition']}, wind {current['wind_speed']:g} {units['wind_speed']} {current['wind_direction']}")
