"""Render the medians (min-max) table, the peer/mcp_kit ratios and the target checks as text."""

from __future__ import annotations

import math
from typing import Any

from .metrics import Metric
from .targets import safe_ratio


def fmt(value: float) -> str:
    """Three significant figures, no exponent for the usual ranges."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if math.isinf(value):
        return "inf"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _cell(stat: dict[str, float] | None) -> str:
    if not stat or stat.get("n", 0) == 0:
        return "-"
    if stat["n"] == 1 or stat["min"] == stat["max"]:
        return fmt(stat["median"])
    return f"{fmt(stat['median'])} ({fmt(stat['min'])}-{fmt(stat['max'])})"


def table(
    metrics: list[Metric],
    summary: dict[str, dict[str, dict[str, float]]],
    order: list[str],
    baseline: str,
) -> str:
    """Plain-text table: one row per metric, one column per implementation, then peer/baseline ratios."""
    peers = [name for name in order if name != baseline]
    header = (
        ["metric", "unit", "better"] + order + [f"{peer}/{baseline}" for peer in peers]
    )
    rows: list[list[str]] = []
    for metric in metrics:
        stats = [summary.get(name, {}).get(metric.key) for name in order]
        if all(not s or s.get("n", 0) == 0 for s in stats):
            continue
        base = summary.get(baseline, {}).get(metric.key, {}).get("median", math.nan)
        ratios = [
            fmt(
                safe_ratio(
                    summary.get(p, {}).get(metric.key, {}).get("median", math.nan), base
                )
            )
            for p in peers
        ]
        rows.append(
            [metric.label, metric.unit, "lower" if metric.lower_is_better else "higher"]
            + [_cell(s) for s in stats]
            + ratios
        )
    widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
    lines = [
        "  ".join(
            text.ljust(widths[i]) if i == 0 else text.rjust(widths[i])
            for i, text in enumerate(row)
        )
        for row in [header] + rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def targets_text(rows: list[dict[str, Any]], baseline: str) -> str:
    """One line per target: PASS / FAIL / n/a with the measured advantage."""
    lines = []
    for row in rows:
        verdict = {True: "PASS", False: "FAIL", None: "n/a "}[row["passed"]]
        if "advantage" in row:
            detail = f"{baseline} is {fmt(row['advantage'])}x better (need {row['required']})"
        else:
            detail = f"{baseline}: {fmt(row['value'])} (need {row['required']})"
        lines.append(f"  {verdict}  {row['target']}: {detail}")
    return "\n".join(lines)
