"""Dependency-free SVG charts: line panels (scaling curves) and grouped horizontal bars (tables).

Pure functions from numbers to SVG text; no I/O, nothing imported from the rest of the harness, so
any script in bench/ can use them. Colours are fixed per implementation name (`color_for`), so a
framework has the same colour in every chart; `name@asyncio` variants are dashed, series marked
`before` are dotted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

PALETTE = {
    "mcp_kit": "#1f77b4",
    "sdk": "#d62728",
    "fastmcp": "#2ca02c",
    "floor": "#7f7f7f",
}
EXTRA_COLOURS = ("#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf", "#ff7f0e")
FONT = "font-family='Helvetica, Arial, sans-serif'"


def color_for(name: str) -> str:
    """The colour of an implementation (its base name before `@` or a space decides)."""
    base = name.split("@")[0].split(" ")[0]
    if base in PALETTE:
        return PALETTE[base]
    return EXTRA_COLOURS[sum(map(ord, base)) % len(EXTRA_COLOURS)]


def dash_for(name: str) -> str:
    """Stroke dash pattern: solid, dashed for event-loop variants, dotted for `before` series."""
    if "before" in name:
        return "2,3"
    if "@" in name:
        return "6,3"
    return ""


@dataclass
class Series:
    """One line: a name and its (x, y) points (NaN y values are skipped)."""

    name: str
    points: list[tuple[float, float]]


@dataclass
class Panel:
    """One plot: several series over the same axes, optionally a horizontal target line."""

    title: str
    x_label: str
    y_label: str
    series: list[Series]
    log_x: bool = True
    log_y: bool = False
    target: float | None = None
    target_label: str = ""
    notes: list[str] = field(default_factory=list)


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 10_000:
        return f"{value / 1000:.0f}k"
    if magnitude >= 1000:
        return f"{value / 1000:.1f}k".replace(".0k", "k")
    if magnitude >= 10:
        return f"{value:.0f}"
    if magnitude >= 1:
        return f"{value:.1f}".replace(".0", "")
    return f"{value:.2g}"


def _scale(lo: float, hi: float, log: bool, size: float, invert: bool) -> tuple:
    """A function value -> pixel offset within `size`."""
    if log:
        lo, hi = math.log10(lo), math.log10(hi)
    span = (hi - lo) or 1.0

    def place(value: float) -> float:
        v = math.log10(value) if log else value
        fraction = (v - lo) / span
        return size * (1 - fraction) if invert else size * fraction

    return place, lo, hi


def _y_ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        ticks = []
        for exponent in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
            for mantissa in (1, 2, 5):
                value = mantissa * 10.0**exponent
                if lo <= value <= hi:
                    ticks.append(value)
        return ticks or [lo, hi]
    raw = (hi - lo) / 5 or 1.0
    step = 10 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 5, 10):
        if raw <= step * multiple:
            step *= multiple
            break
    start = math.ceil(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step) + 1)]


def _panel(panel: Panel, left: float, top: float, width: float, height: float) -> list[str]:
    out: list[str] = []
    plot_left, plot_top = left + 58, top + 30
    plot_w, plot_h = width - 78, height - 80
    points = [(x, y) for s in panel.series for x, y in s.points if not math.isnan(y) and not math.isnan(x)]
    out.append(
        f"<text x='{left + width / 2:.1f}' y='{top + 16:.1f}' text-anchor='middle' font-size='13' "
        f"font-weight='bold' {FONT}>{escape(panel.title)}</text>"
    )
    if not points:
        out.append(f"<text x='{left + width / 2:.1f}' y='{top + height / 2:.1f}' text-anchor='middle' "
                   f"font-size='12' {FONT}>no data</text>")
        return out
    log_x = panel.log_x and all(x > 0 for x, _ in points)
    ys = [y for _, y in points] + ([panel.target] if panel.target is not None else [])
    log_y = panel.log_y and all(y > 0 for y in ys)
    xs = sorted({x for x, _ in points})
    x_lo, x_hi = xs[0], xs[-1]
    if x_lo == x_hi:
        x_lo, x_hi = (x_lo / 2, x_hi * 2) if log_x else (x_lo - 1, x_hi + 1)
    y_lo, y_hi = min(ys), max(ys)
    if log_y:
        y_lo, y_hi = y_lo / 1.3, y_hi * 1.3
    else:
        y_lo = min(0.0, y_lo)
        y_hi = y_hi * 1.1 if y_hi > 0 else 1.0
    if y_lo == y_hi:
        y_hi = y_lo + 1
    place_x, _, _ = _scale(x_lo, x_hi, log_x, plot_w, invert=False)
    place_y, _, _ = _scale(y_lo, y_hi, log_y, plot_h, invert=True)
    out.append(f"<rect x='{plot_left}' y='{plot_top}' width='{plot_w}' height='{plot_h}' fill='none' stroke='#ccc'/>")
    for tick in _y_ticks(y_lo, y_hi, log_y):
        y = plot_top + place_y(tick)
        out.append(f"<line x1='{plot_left}' x2='{plot_left + plot_w}' y1='{y:.1f}' y2='{y:.1f}' stroke='#eee'/>")
        out.append(f"<text x='{plot_left - 4}' y='{y + 4:.1f}' text-anchor='end' font-size='10' {FONT}>"
                   f"{_fmt(tick)}</text>")
    for tick in xs:
        x = plot_left + place_x(tick)
        out.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{plot_top + plot_h}' y2='{plot_top + plot_h + 4}' "
                   "stroke='#999'/>")
        out.append(f"<text x='{x:.1f}' y='{plot_top + plot_h + 16}' text-anchor='middle' font-size='10' {FONT}>"
                   f"{_fmt(tick)}</text>")
    out.append(f"<text x='{plot_left + plot_w / 2:.1f}' y='{plot_top + plot_h + 32}' text-anchor='middle' "
               f"font-size='11' {FONT}>{escape(panel.x_label)}{' (log)' if log_x else ''}</text>")
    y_mid = plot_top + plot_h / 2
    out.append(f"<text x='{left + 12}' y='{y_mid:.1f}' text-anchor='middle' font-size='11' {FONT} "
               f"transform='rotate(-90 {left + 12} {y_mid:.1f})'>{escape(panel.y_label)}"
               f"{' (log)' if log_y else ''}</text>")
    if panel.target is not None:
        y = plot_top + place_y(panel.target)
        out.append(f"<line x1='{plot_left}' x2='{plot_left + plot_w}' y1='{y:.1f}' y2='{y:.1f}' stroke='#000' "
                   "stroke-dasharray='1,4' stroke-width='1.5'/>")
        out.append(f"<text x='{plot_left + plot_w - 2}' y='{y - 3:.1f}' text-anchor='end' font-size='10' {FONT}>"
                   f"{escape(panel.target_label or 'target')}</text>")
    for series in panel.series:
        valid = [(x, y) for x, y in series.points if not math.isnan(y)]
        if not valid:
            continue
        colour, dash = color_for(series.name), dash_for(series.name)
        path = " ".join(f"{plot_left + place_x(x):.1f},{plot_top + place_y(y):.1f}" for x, y in valid)
        dash_attr = f" stroke-dasharray='{dash}'" if dash else ""
        out.append(f"<polyline points='{path}' fill='none' stroke='{colour}' stroke-width='2'{dash_attr}/>")
        for x, y in valid:
            out.append(f"<circle cx='{plot_left + place_x(x):.1f}' cy='{plot_top + place_y(y):.1f}' r='2.5' "
                       f"fill='{colour}'/>")
    return out


def _legend(names: Sequence[str], left: float, top: float) -> list[str]:
    out = []
    x = left
    for name in names:
        colour, dash = color_for(name), dash_for(name)
        dash_attr = f" stroke-dasharray='{dash}'" if dash else ""
        out.append(f"<line x1='{x}' x2='{x + 22}' y1='{top}' y2='{top}' stroke='{colour}' stroke-width='2'"
                   f"{dash_attr}/>")
        out.append(f"<text x='{x + 26}' y='{top + 4}' font-size='11' {FONT}>{escape(name)}</text>")
        x += 36 + 7 * len(name)
    return out


def line_panels(title: str, panels: list[Panel], subtitle: str = "", columns: int = 2,
                panel_width: int = 420, panel_height: int = 280) -> str:
    """One SVG: a title, a legend of every series name, and the panels in a grid."""
    columns = max(1, min(columns, len(panels) or 1))
    rows = math.ceil(len(panels) / columns) if panels else 1
    header = 62 if subtitle else 48
    width, height = columns * panel_width, header + rows * panel_height + 10
    names: list[str] = []
    for panel in panels:
        for series in panel.series:
            if series.name not in names and any(not math.isnan(y) for _, y in series.points):
                names.append(series.name)
    out = _opening(width, height, title, subtitle)
    out += _legend(names, 12, header - 10)
    for index, panel in enumerate(panels):
        row, column = divmod(index, columns)
        out += _panel(panel, column * panel_width, header + row * panel_height, panel_width, panel_height)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _opening(width: int, height: int, title: str, subtitle: str) -> list[str]:
    """An SVG's first elements: the canvas, a white background, the title and the subtitle (if any)."""
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}'>",
        f"<rect width='{width}' height='{height}' fill='white'/>",
        f"<text x='10' y='20' font-size='15' font-weight='bold' {FONT}>{escape(title)}</text>",
    ]
    if subtitle:
        out.append(f"<text x='10' y='36' font-size='11' fill='#555' {FONT}>{escape(subtitle)}</text>")
    return out


def bar_chart(title: str, categories: list[str], series: dict[str, list[float]], unit: str,
              log: bool = False, subtitle: str = "", width: int = 760) -> str:
    """Grouped horizontal bars: one group per category, one bar per series (NaN values are left out)."""
    names = list(series)
    bar, gap, label_w = 12, 10, 240
    group_h = bar * max(1, len(names)) + gap
    header = 62 if subtitle else 48
    height = header + group_h * len(categories) + 30
    values = [v for vs in series.values() for v in vs if not math.isnan(v) and (v > 0 or not log)]
    hi = max(values) if values else 1.0
    span = width - label_w - 70
    if log:
        place, _, _ = _scale(min(values) / 2 if values else 0.5, hi * 1.5, True, span, invert=False)
    else:
        place, _, _ = _scale(0.0, hi * 1.05, False, span, invert=False)
    out = _opening(width, height, title, subtitle)
    out += _legend(names, 12, header - 10)
    for index, category in enumerate(categories):
        top = header + index * group_h
        out.append(f"<text x='{label_w - 6}' y='{top + group_h / 2:.1f}' text-anchor='end' font-size='11' "
                   f"{FONT}>{escape(category)}</text>")
        for number, name in enumerate(names):
            value = series[name][index] if index < len(series[name]) else math.nan
            if math.isnan(value) or (log and value <= 0):
                continue
            length = max(1.0, place(value))
            y = top + number * bar
            out.append(f"<rect x='{label_w}' y='{y}' width='{length:.1f}' height='{bar - 2}' "
                       f"fill='{color_for(name)}'/>")
            out.append(f"<text x='{label_w + length + 4:.1f}' y='{y + bar - 3}' font-size='10' {FONT}>"
                       f"{_fmt(value)} {escape(unit)}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
