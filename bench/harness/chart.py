"""The README's headline table and its SVG chart, both computed from one `bench/run.py` results file.

Reads only a results dict as `bench/run.py` writes it (`summary[impl][metric]["median"]`), so the
table and the chart of any run, including the published one the README shows, come from that run's
results file. Columns: mcp_kit, the SDK and FastMCP on mcp_kit's own event loop (uvloop + httptools),
the SDK and FastMCP as `pip install` gives them (stdlib asyncio + h11), and the framework-free floor;
the bytes per reply of the row's case; the SDK's ratios to mcp_kit on the same loop and as installed.
Dependency-free: the SVG is written here, deterministically (same results, same bytes). Imports
nothing from the harness, so a test can load this file alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

# The table's value columns and the chart's bars, in order (names as in a results file's summary).
COLUMNS = ("mcp_kit", "sdk", "fastmcp", "sdk@asyncio", "fastmcp@asyncio", "floor")
CHARTED = COLUMNS
PIP_SDK = "sdk@asyncio"
NAMES = {"mcp_kit": "mcp_kit", "sdk": "SDK", "fastmcp": "FastMCP", "sdk@asyncio": "SDK asyncio",
         "fastmcp@asyncio": "FastMCP asyncio", "floor": "floor"}
COLOURS = {"mcp_kit": "#2563eb", "sdk": "#6b7280", "fastmcp": "#d97706", "sdk@asyncio": "#d1d5db",
           "fastmcp@asyncio": "#fcd34d", "floor": "#10b981"}
HEADER = ("", "bytes per reply", "mcp_kit", "SDK", "FastMCP", "SDK (asyncio)", "FastMCP (asyncio)", "floor",
          "SDK ÷ mcp_kit, same loop", "SDK (asyncio) ÷ mcp_kit")
ALIGN = ("---",) + ("---:",) * (len(HEADER) - 1)
TOLERANCE_BYTES = 0.5  # bytes per reply are means of whole numbers: equal cases agree exactly


@dataclass(frozen=True)
class Figure:
    """One figure of the README's Performance table, and how the chart shows it."""

    key: str  # the metric key in a results file's summary
    label: str  # the README table's row label
    title: str  # the chart panel's title
    unit: str  # as the README writes it: "ms", "µs", "/s", "MiB", "%"
    lower_is_better: bool
    wire: str | None = None  # the summary key of the bytes per reply of the timed requests
    exact: bool = True  # those bytes must be equal in every column (else they differ by design)
    charted: bool = True


FIGURES = (
    Figure("stdio.cold_start_init_ms", "stdio cold start, spawn → initialize result",
           "stdio cold start to initialize", "ms", True, "stdio.wire_init_bytes", exact=False),
    Figure("stdio.seq_p50_us", "stdio `tools/call` sequential p50", "stdio tools/call, sequential p50", "µs", True,
           "stdio.wire_echo_bytes"),
    Figure("stdio.pipelined_calls_per_s", "stdio `tools/call` pipelined, 64 in flight",
           "stdio tools/call, 64 in flight", "/s", False, "stdio.wire_echo_pipelined_bytes"),
    Figure("stdio.cpu_per_call_seq_us", "stdio server CPU per call, sequential",
           "stdio server CPU per call, sequential", "µs", True, "stdio.wire_echo_bytes"),
    Figure("stdio.cpu_per_call_pipelined_us", "stdio server CPU per call, pipelined",
           "stdio server CPU per call, pipelined", "µs", True, "stdio.wire_echo_pipelined_bytes"),
    Figure("stdio.echo_1mib_ms", "stdio 1 MiB echo round trip", "stdio 1 MiB echo round trip", "ms", True,
           "stdio.wire_echo_1mib_bytes"),
    Figure("stdio.rss_after_init_mib", "RSS after initialize", "memory (RSS) after initialize", "MiB", True),
    Figure("stdio.rss_growth_pct", "RSS growth from 10k to 100k calls", "RSS growth over the leak check", "%", True,
           charted=False),  # all near zero: a table cell says it better than bars
    Figure("http_sse.c16_calls_per_s", "Streamable HTTP, SSE replies, 16 clients",
           "Streamable HTTP, SSE, 16 clients", "/s", False, "http_sse.c16_wire_payload_bytes"),
    Figure("http_sse.c16_cpu_per_call_us", "Streamable HTTP, SSE, server CPU per call (c=16)",
           "Streamable HTTP, SSE, CPU per call", "µs", True, "http_sse.c16_wire_payload_bytes"),
    Figure("http_json.c16_calls_per_s", "Streamable HTTP, JSON replies, 16 clients",
           "Streamable HTTP, JSON, 16 clients", "/s", False, "http_json.c16_wire_payload_bytes"),
    Figure("http_json.c16_cpu_per_call_us", "Streamable HTTP, JSON, server CPU per call (c=16)",
           "Streamable HTTP, JSON, CPU per call", "µs", True, "http_json.c16_wire_payload_bytes"),
    Figure("legacy_sse.c16_calls_per_s", "legacy HTTP+SSE, 16 clients", "legacy HTTP+SSE, 16 clients", "/s", False,
           "legacy_sse.c16_wire_payload_bytes"),
)


def median(result: dict[str, Any], impl: str, key: str) -> float | None:
    """The median of `key` for `impl` in a results dict, or None when it was not measured."""
    value = (result.get("summary", {}).get(impl, {}).get(key) or {}).get("median")
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
    """How many times better mcp_kit is than a peer, to two significant figures: '3.2', '63', '0.87'."""
    ratio = theirs / ours if figure.lower_is_better else ours / theirs
    return f"{ratio:.2g}" if ratio < 10 else f"{round(ratio)}"


def ratio_text(figure: Figure, ours: float, theirs: float) -> str:
    """The README's ratio cell: '3.2×' (peer ÷ mcp_kit) where lower is better, '63× more' where higher is."""
    return f"{advantage(figure, ours, theirs)}×" + ("" if figure.lower_is_better else " more")


def wire_bytes(result: dict[str, Any], figure: Figure) -> dict[str, float]:
    """The bytes per reply of the figure's case for each column that measured the figure itself."""
    if figure.wire is None:
        return {}
    found = {}
    for impl in COLUMNS:
        value = median(result, impl, figure.wire)
        if value is not None and median(result, impl, figure.key) is not None:
            found[impl] = value
    return found


def bytes_equal(found: dict[str, float]) -> bool:
    return not found or max(found.values()) - min(found.values()) <= TOLERANCE_BYTES


def bytes_cell(result: dict[str, Any], figure: Figure) -> str:
    """'93 B' when every column sent the same bytes; a range where they differ by design; '–' without a case."""
    found = wire_bytes(result, figure)
    if not found:
        return "–"
    if bytes_equal(found):
        return f"{number(next(iter(found.values())))} B"
    low, high = min(found.values()), max(found.values())
    return f"{number(low)}–{number(high)} B, each its own" if not figure.exact else "unequal: REFUSED"


def row_cells(result: dict[str, Any], figure: Figure) -> list[str]:
    """The README row of `figure`: label, bytes per reply, one cell per column, the two SDK ratios.

    A row whose case must be equal but is not reads REFUSED in every value cell, like `bench/run.py`'s tables.
    """
    refused = figure.exact and not bytes_equal(wire_bytes(result, figure))
    values = [median(result, impl, figure.key) for impl in COLUMNS]
    cells = [figure.label, bytes_cell(result, figure)]
    cells += ["REFUSED" if refused else ("–" if value is None else with_unit(value, figure.unit)) for value in values]
    ours = values[0]
    for peer in ("sdk", PIP_SDK):
        theirs = median(result, peer, figure.key)
        if figure.charted and not refused and ours and theirs:
            cells.append(ratio_text(figure, ours, theirs))
        else:
            cells.append("")
    return cells


def markdown_table(result: dict[str, Any]) -> str:
    """The README's Performance table for `result`, as Markdown (`bench/chart.py RESULTS --table`)."""
    lines = [HEADER, ALIGN] + [tuple(row_cells(result, figure)) for figure in FIGURES]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines) + "\n"


# ------------------------------------------------------------------------------------------- SVG

WIDTH, MARGIN, GAP, PANEL_COLUMNS = 948, 16, 14, 3
PANEL_W = (WIDTH - 2 * MARGIN - (PANEL_COLUMNS - 1) * GAP) // PANEL_COLUMNS
TOP = 112
BAR_H, BAR_STEP, BARS_TOP, LABEL_W, VALUE_W = 14, 18, 56, 110, 62
PANEL_H = BARS_TOP + len(CHARTED) * BAR_STEP + 18
FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"


def _text(x: float, y: float, content: str, size: float = 11, weight: str = "normal", fill: str = "#1f2937",
          anchor: str = "start") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:g}" font-weight="{weight}" fill="{fill}" '
            f'text-anchor="{anchor}">{escape(content)}</text>')


def panel_ratios(figure: Figure, values: dict[str, float]) -> str:
    """The panel's ratio line: the SDK against mcp_kit on the same loop and as installed."""
    ours = values.get("mcp_kit")
    if not ours:
        return ""
    parts = [f"{advantage(figure, ours, values[peer])}× {where}"
             for peer, where in (("sdk", "same loop"), (PIP_SDK, "asyncio")) if values.get(peer)]
    if not parts:
        return ""
    return ("SDK ÷ mcp_kit: " if figure.lower_is_better else "mcp_kit ÷ SDK: ") + ", ".join(parts)


def _panel(figure: Figure, values: dict[str, float], x: float, y: float) -> list[str]:
    parts = [f'<rect x="{x:.1f}" y="{y:.1f}" width="{PANEL_W}" height="{PANEL_H - 8}" rx="6" fill="#f8fafc" '
             f'stroke="#e5e7eb"/>',
             _text(x + 10, y + 18, figure.title, 12, "bold"),
             _text(x + 10, y + 33, "lower is better" if figure.lower_is_better else "higher is better", 10.5,
                   fill="#4b5563")]
    ratios = panel_ratios(figure, values)
    if ratios:
        parts.append(_text(x + 10, y + 47, ratios, 10.5, fill="#4b5563"))
    longest = max(values.values())
    span = PANEL_W - LABEL_W - VALUE_W - 10
    for row, impl in enumerate(impl for impl in CHARTED if impl in values):
        top = y + BARS_TOP + row * BAR_STEP
        length = max(1.0, span * values[impl] / longest) if longest > 0 else 1.0
        parts += [_text(x + 10, top + BAR_H - 3, NAMES[impl], 11, "bold" if impl == "mcp_kit" else "normal"),
                  f'<rect x="{x + LABEL_W:.1f}" y="{top:.1f}" width="{length:.1f}" height="{BAR_H}" rx="2" '
                  f'fill="{COLOURS[impl]}"/>',
                  _text(x + LABEL_W + length + 5, top + BAR_H - 3, with_unit(values[impl], figure.unit), 11)]
    return parts


def panels_of(result: dict[str, Any]) -> list[tuple[Figure, dict[str, float]]]:
    """The charted figures that `result` has, each with its value per column (refused rows left out)."""
    panels = []
    for figure in FIGURES:
        values = {impl: value for impl in CHARTED if (value := median(result, impl, figure.key)) is not None}
        if figure.charted and values and (not figure.exact or bytes_equal(wire_bytes(result, figure))):
            panels.append((figure, values))
    return panels


def render_svg(result: dict[str, Any]) -> str:
    """The chart of `result` (a results dict) as an SVG document."""
    panels = panels_of(result)
    rows = max(1, math.ceil(len(panels) / PANEL_COLUMNS))
    height = TOP + rows * PANEL_H + MARGIN
    machine = result.get("machine", {})
    run = f"medians of one {result.get('mode', '')} run".replace("one  run", "one run")
    where = ", ".join(part for part in (f"{machine['cpus']} CPUs" if machine.get("cpus") else "",
                                        f"Python {machine['python']}" if machine.get("python") else "") if part)
    subtitle = f"The same tiny server on each framework, equal bytes per reply; {run}" + (
        f" ({where})" if where else "") + "."
    loops = ("mcp_kit, SDK, FastMCP: uvloop + httptools (what mcp_kit installs); asyncio: the stdlib loop + h11 "
             "(what pip install mcp / fastmcp gives); floor: no framework.")
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" font-family="{FONT}" role="img" '
             f'aria-label="mcp_kit versus the official MCP SDK and FastMCP, per benchmark figure">',
             "<title>mcp_kit vs the official SDK and FastMCP</title>",
             f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
             _text(MARGIN, 28, "mcp_kit vs the official SDK and FastMCP", 16, "bold"),
             _text(MARGIN, 48, subtitle, 11.5, fill="#4b5563"),
             _text(MARGIN, 66, loops, 11.5, fill="#4b5563")]
    legend_x = float(MARGIN)
    for impl in (impl for impl in CHARTED if any(impl in values for _, values in panels)):
        parts += [f'<rect x="{legend_x:.1f}" y="80" width="12" height="12" rx="2" fill="{COLOURS[impl]}"/>',
                  _text(legend_x + 17, 90.5, NAMES[impl], 11.5)]
        legend_x += 17 + 7 * len(NAMES[impl]) + 22
    for index, (figure, values) in enumerate(panels):
        column, row = index % PANEL_COLUMNS, index // PANEL_COLUMNS
        parts += _panel(figure, values, MARGIN + column * (PANEL_W + GAP), TOP + row * PANEL_H)
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
