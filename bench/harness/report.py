"""Render the medians (min-max) table, the peer/mcp_kit ratios and the target checks as text.

Every row timed on a wire case shows the bytes per reply; a row whose case is `exact` and whose
implementations sent different bytes is refused (its figures are replaced by the bytes of each).
"""

from __future__ import annotations

import math
from typing import Any

from . import wire
from .metrics import Metric
from .targets import safe_ratio


def fmt(value: float | None) -> str:
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


def cell(stat: dict[str, float] | None) -> str:
    """`median (min-max)`, or just the median when there is one value."""
    if not stat or stat.get("n", 0) == 0:
        return "-"
    if stat["n"] == 1 or stat["min"] == stat["max"]:
        return fmt(stat["median"])
    return f"{fmt(stat['median'])} ({fmt(stat['min'])}-{fmt(stat['max'])})"


def align(header: list[str], rows: list[list[str]]) -> str:
    """Columns padded to width: the first left-aligned, the rest right-aligned, a rule under the header."""
    widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
    lines = [
        "  ".join(text.ljust(widths[i]) if i == 0 else text.rjust(widths[i]) for i, text in enumerate(row))
        for row in [header] + rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def refused(metric: Metric, summary: dict[str, dict[str, dict[str, float]]], order: list[str]) -> str | None:
    """The refusal message when `metric` is exact and the implementations sent unequal bytes, else None."""
    if metric.wire is None or not metric.exact:
        return None
    present = [name for name in order if summary.get(name, {}).get(metric.key, {}).get("n", 0)]
    checked = wire.check(metric.wire, summary, present)
    return None if checked.equal else checked.refusal(metric.label)


def table(
    metrics: list[Metric],
    summary: dict[str, dict[str, dict[str, float]]],
    order: list[str],
    baseline: str,
    labels: dict[str, str] | None = None,
) -> str:
    """Plain-text table: one row per metric, one column per implementation, peer/baseline ratios, bytes/reply.

    `labels` renames column headers (`sdk` for `sdk@asyncio` in a table titled by its event loop).
    """
    peers = [name for name in order if name != baseline]
    label = (labels or {}).get
    header = (
        ["metric", "unit", "better"]
        + [label(name, name) for name in order]
        + [f"{label(peer, peer)}/{label(baseline, baseline)}" for peer in peers]
        + ["bytes/reply"]
    )
    rows: list[list[str]] = []
    for metric in metrics:
        stats = [summary.get(name, {}).get(metric.key) for name in order]
        if all(not s or s.get("n", 0) == 0 for s in stats):
            continue
        present = [name for name, s in zip(order, stats, strict=True) if s and s.get("n", 0)]
        checked = wire.check(metric.wire, summary, present) if metric.wire else None
        bytes_cell = checked.cell() if checked else ""
        head = [metric.label, metric.unit, "lower" if metric.lower_is_better else "higher"]
        if checked is not None and metric.exact and not checked.equal:
            rows.append(head + ["REFUSED"] * len(order) + ["-"] * len(peers) + [bytes_cell])
            continue
        base = summary.get(baseline, {}).get(metric.key, {}).get("median", math.nan)
        ratios = [
            fmt(safe_ratio(summary.get(p, {}).get(metric.key, {}).get("median", math.nan), base)) for p in peers
        ]
        if checked is not None and not metric.exact and not checked.equal:
            bytes_cell += " (framework metadata)"
        rows.append(head + [cell(s) for s in stats] + ratios + [bytes_cell])
    return align(header, rows)


def refusals(metrics: list[Metric], summary: dict[str, dict[str, dict[str, float]]], order: list[str]) -> list[str]:
    """The refusal message of every refused row."""
    return [message for metric in metrics if (message := refused(metric, summary, order))]


def targets_text(rows: list[dict[str, Any]], baseline: str) -> str:
    """One line per target: PASS / FAIL / n/a / REFUSED with the measured advantage."""
    lines = []
    for row in rows:
        if row.get("refused"):
            lines.append(f"  REFUSED  {row['target']}: {row['refused']}")
            continue
        verdict = {True: "PASS", False: "FAIL", None: "n/a "}[row["passed"]]
        if "advantage" in row:
            detail = f"{baseline} is {fmt(row['advantage'])}x better (need {row['required']})"
        else:
            detail = f"{baseline}: {fmt(row['value'])} (need {row['required']})"
        lines.append(f"  {verdict}  {row['target']}: {detail}")
    return "\n".join(lines)


LOOP_SHARE_KEYS = (
    "stdio.cold_start_init_ms",
    "stdio.seq_p50_us",
    "stdio.pipelined_calls_per_s",
    "stdio.cpu_per_call_pipelined_us",
    "stdio.rss_after_init_mib",
    "http_sse.c16_calls_per_s",
    "http_sse.c16_cpu_per_call_us",
    "http_json.c16_calls_per_s",
    "http_json.c16_cpu_per_call_us",
    "legacy_sse.c16_calls_per_s",
)


def loop_share(
    metrics: list[Metric], summary: dict[str, dict[str, dict[str, float]]], names: list[str], other_loop: str
) -> str:
    """For a few key rows: each framework's median on `other_loop` divided by its median on the default loop."""
    by_key = {metric.key: metric for metric in metrics}
    header = ["metric", "unit", "better"] + [f"{name}: {other_loop}/uvloop" for name in names]
    rows = []
    for key in LOOP_SHARE_KEYS:
        metric = by_key.get(key)
        if metric is None:
            continue
        ratios = [
            safe_ratio(
                summary.get(f"{name}@{other_loop}", {}).get(key, {}).get("median", math.nan),
                summary.get(name, {}).get(key, {}).get("median", math.nan),
            )
            for name in names
        ]
        if all(math.isnan(r) for r in ratios):
            continue
        rows.append(
            [metric.label, metric.unit, "lower" if metric.lower_is_better else "higher"] + [fmt(r) for r in ratios]
        )
    return align(header, rows)
