"""An SVG chart of one run's results: mcp_kit against the official SDK and FastMCP, one panel per figure.

Reads only a results dict as `bench/run.py` writes it (`summary[impl][metric]["median"]`), so the
chart of any run, including the published one the README shows, comes from that run's results file.
Dependency-free: the SVG is written here, deterministically (same results, same bytes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

CHARTED = ("mcp_kit", "sdk", "fastmcp")
NAMES = {"mcp_kit": "mcp_kit", "sdk": "SDK", "fastmcp": "FastMCP", "floor": "floor"}
COLOURS = {"mcp_kit": "#2563eb", "sdk": "#9ca3af", "fastmcp": "#f59e0b"}


@dataclass(frozen=True)
class Figure:
    """One figure of the README's Performance table, and how the chart shows it."""

    key: str  # the metric key in a results file's summary
    label: str  # the README table's row label
    title: str  # the chart panel's title
    unit: str  # as the README writes it: "ms", "µs", "/s", "MiB", "%"
    lower_is_better: bool
    charted: bool = True


FIGURES = (
    Figure("stdio.cold_start_init_ms", "stdio cold start, spawn → initialize result",
           "stdio cold start to initialize", "ms", True),
    Figure("stdio.seq_p50_us", "stdio `tools/call` sequential p50", "stdio tools/call, sequential p50", "µs", True),
    Figure("stdio.pipelined_calls_per_s", "stdio `tools/call` pipelined, 64 in flight",
           "stdio tools/call, 64 in flight", "/s", False),
    Figure("stdio.cpu_per_call_seq_us", "stdio server CPU per call, sequential",
           "stdio server CPU per call, sequential", "µs", True),
    Figure("stdio.cpu_per_call_pipelined_us", "stdio server CPU per call, pipelined",
           "stdio server CPU per call, pipelined", "µs", True),
    Figure("stdio.echo_1mib_ms", "stdio 1 MiB echo round trip", "stdio 1 MiB echo round trip", "ms", True),
    Figure("stdio.rss_after_init_mib", "RSS after initialize", "memory (RSS) after initialize", "MiB", True),
    Figure("stdio.rss_growth_pct", "RSS growth from 10k to 100k calls", "RSS growth over the leak check", "%", True,
           charted=False),  # all near zero: a table cell says it better than bars
    Figure("http_sse.c16_calls_per_s", "Streamable HTTP, SSE replies, 16 clients",
           "Streamable HTTP, SSE, 16 clients", "/s", False),
    Figure("http_json.c16_calls_per_s", "Streamable HTTP, JSON replies, 16 clients",
           "Streamable HTTP, JSON, 16 clients", "/s", False),
    Figure("http_json.c16_cpu_per_call_us", "Streamable HTTP, JSON, server CPU per call (c=16)",
           "Streamable HTTP, server CPU per call", "µs", True),
    Figure("legacy_sse.c16_calls_per_s", "legacy HTTP+SSE, 16 clients", "legacy HTTP+SSE, 16 clients", "/s", False),
)


def median(result: dict[str, Any], impl: str, key: str) -> float | None:
    """The median of `key` for `impl` in a results dict, or None when it was not measured."""
    value = result.get("summary", {}).get(impl, {}).get(key, {}).get("median")
    return None if value is None or not math.isfinite(value) else float(value)


def number(value: float) -> str:
    """A figure as the README writes it: 201, 77,957, 57, 10.4, 3.8, 0.01."""
    if abs(value) >= 100:
        return f"{round(value):,}"
    rounded = round(value, 1 if abs(value) >= 10 else 2)
    return f"{rounded:,.2f}".rstrip("0").rstrip(".")


def with_unit(value: float, unit: str) -> str:
    return f"{number(value)}{unit}" if unit == "/s" else f"{number(value)} {unit}"


def advantage(figure: Figure, ours: float, theirs: float) -> str:
    """How many times better mcp_kit is than a peer, to two significant figures: '3.2', '63'."""
    ratio = theirs / ours if figure.lower_is_better else ours / theirs
    return f"{ratio:.2g}" if ratio < 10 else f"{round(ratio)}"


def ratio_text(figure: Figure, ours: float, theirs: float) -> str:
    """The README's ratio cell: '3.2×' (SDK ÷ mcp_kit) where lower is better, '63× more' where higher is."""
    return f"{advantage(figure, ours, theirs)}×" + ("" if figure.lower_is_better else " more")


# ------------------------------------------------------------------------------------------- SVG

WIDTH, MARGIN, GAP, COLUMNS = 948, 16, 14, 3
PANEL_W = (WIDTH - 2 * MARGIN - (COLUMNS - 1) * GAP) // COLUMNS
PANEL_H, TOP = 112, 92
BAR_H, BAR_STEP, LABEL_W, VALUE_W = 14, 20, 64, 70
FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"


def _text(x: float, y: float, content: str, size: float = 11, weight: str = "normal", fill: str = "#1f2937",
          anchor: str = "start") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:g}" font-weight="{weight}" fill="{fill}" '
            f'text-anchor="{anchor}">{escape(content)}</text>')


def _panel(figure: Figure, values: dict[str, float], x: float, y: float) -> list[str]:
    parts = [f'<rect x="{x:.1f}" y="{y:.1f}" width="{PANEL_W}" height="{PANEL_H - 8}" rx="6" fill="#f8fafc" '
             f'stroke="#e5e7eb"/>',
             _text(x + 10, y + 18, figure.title, 12, "bold")]
    direction = "lower is better" if figure.lower_is_better else "higher is better"
    if "sdk" in values and "mcp_kit" in values:
        times = advantage(figure, values["mcp_kit"], values["sdk"])
        direction += f" · SDK ÷ mcp_kit = {times}×" if figure.lower_is_better else f" · mcp_kit ÷ SDK = {times}×"
    parts.append(_text(x + 10, y + 33, direction, 10.5, fill="#4b5563"))
    longest = max(values.values())
    span = PANEL_W - LABEL_W - VALUE_W - 10
    for row, impl in enumerate(impl for impl in CHARTED if impl in values):
        top = y + 42 + row * BAR_STEP
        length = max(1.0, span * values[impl] / longest) if longest > 0 else 1.0
        parts += [_text(x + 10, top + BAR_H - 3, NAMES[impl], 11, "bold" if impl == "mcp_kit" else "normal"),
                  f'<rect x="{x + LABEL_W:.1f}" y="{top:.1f}" width="{length:.1f}" height="{BAR_H}" rx="2" '
                  f'fill="{COLOURS[impl]}"/>',
                  _text(x + LABEL_W + length + 5, top + BAR_H - 3, with_unit(values[impl], figure.unit), 11)]
    return parts


def render_svg(result: dict[str, Any]) -> str:
    """The chart of `result` (a results dict) as an SVG document."""
    panels = []
    for figure in FIGURES:
        values = {impl: value for impl in CHARTED if (value := median(result, impl, figure.key)) is not None}
        if figure.charted and values:
            panels.append((figure, values))
    rows = max(1, math.ceil(len(panels) / COLUMNS))
    height = TOP + rows * PANEL_H + MARGIN
    machine = result.get("machine", {})
    run = f"medians of one {result.get('mode', '')} run".replace("one  run", "one run")
    where = ", ".join(part for part in (f"{machine['cpus']} CPUs" if machine.get("cpus") else "",
                                        f"Python {machine['python']}" if machine.get("python") else "") if part)
    subtitle = f"The same tiny server on each framework; {run}" + (f" ({where})" if where else "") + "."
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" font-family="{FONT}" role="img" '
             f'aria-label="mcp_kit versus the official MCP SDK and FastMCP, per benchmark figure">',
             "<title>mcp_kit vs the official SDK and FastMCP</title>",
             f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
             _text(MARGIN, 28, "mcp_kit vs the official SDK and FastMCP", 16, "bold"),
             _text(MARGIN, 48, subtitle, 11.5, fill="#4b5563")]
    legend_x = float(MARGIN)
    for impl in (impl for impl in CHARTED if any(impl in values for _, values in panels)):
        parts += [f'<rect x="{legend_x:.1f}" y="60" width="12" height="12" rx="2" fill="{COLOURS[impl]}"/>',
                  _text(legend_x + 17, 70.5, NAMES[impl], 11.5)]
        legend_x += 17 + 8 * len(NAMES[impl]) + 22
    for index, (figure, values) in enumerate(panels):
        column, row = index % COLUMNS, index // COLUMNS
        parts += _panel(figure, values, MARGIN + column * (PANEL_W + GAP), TOP + row * PANEL_H)
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
