"""Tables, target verdicts and charts of the scaling curves, all computed from a results dictionary.

Works on what `bench/scaling.py` stores (per curve: samples, summary, settings), so tables and
charts can be rebuilt from a saved JSON without measuring again (`scaling.py --from-json`).
"""

from __future__ import annotations

import math
from typing import Any

from . import charts, wire
from .curves import Curve, Summary, Target, key, median_of
from .implementations import split_name, variant_name
from .report import align, cell, fmt
from .targets import safe_ratio


def numeric_xs(curve: Curve, settings: dict[str, Any]) -> list[float | str]:
    """The x values of a curve for the settings it ran with."""
    return list(curve.xs(settings))


def resolve_x(target: Target, curve: Curve, settings: dict[str, Any], summary: Summary, base: str) -> float | str:
    """The x a target is judged at: its own, or (None) the last x where the baseline has the figure."""
    if target.x is not None:
        return target.x
    have = [x for x in numeric_xs(curve, settings)
            if not isinstance(x, str) and not math.isnan(median_of(summary, base, key(target.figure, x)))]
    return have[-1] if have else math.nan


def evaluate(curve: Curve, settings: dict[str, Any], summary: Summary, base: str) -> list[dict[str, Any]]:
    """Each target of the curve judged on the medians: met / not met / n/a / refused."""
    loop = split_name(base)[1]
    figures = {figure.name: figure for figure in curve.figures}

    def get(impl: str, figure: str, x: float | str) -> float:
        name = base if impl == base else variant_name(impl, loop)
        return median_of(summary, name, key(figure, x))

    rows = []
    for target in curve.targets:
        x = resolve_x(target, curve, settings, summary, base)
        row: dict[str, Any] = {"figure": target.figure, "x": x, "requirement": target.requirement, "baseline": base}
        figure = figures[target.figure]
        peers = [variant_name(peer, loop) for peer in target.needs]
        if figure.wire and figure.exact and peers:
            checked = wire.check(key(figure.wire, x), summary, [base, *peers])
            if not checked.equal:
                row.update(verdict="refused", measured=checked.refusal(figure.label))
                rows.append(row)
                continue
        value = target.measured(get, base, x) if not (isinstance(x, float) and math.isnan(x)) else math.nan
        row["value"] = value
        row["measured"] = target.shown(value)
        row["verdict"] = "n/a" if math.isnan(value) else ("met" if target.passes(value) else "not met")
        rows.append(row)
    return rows


def _unsupported(curve: Curve, figure_unsupported: dict[str, str], name: str) -> str | None:
    base = split_name(name)[0]
    return figure_unsupported.get(base) or curve.unsupported.get(base)


def table(
    curve: Curve,
    settings: dict[str, Any],
    summary: Summary,
    order: list[str],
    base: str,
    verdicts: list[dict[str, Any]],
    before: Summary | None = None,
) -> str:
    """The curve's table: one row per figure and x; implementations, ratios to the baseline, bytes per reply,
    the baseline's value in the `before` results (when given), and the target with its verdict."""
    return align(*table_rows(curve, settings, summary, order, base, verdicts, before))


def table_rows(
    curve: Curve,
    settings: dict[str, Any],
    summary: Summary,
    order: list[str],
    base: str,
    verdicts: list[dict[str, Any]],
    before: Summary | None = None,
) -> tuple[list[str], list[list[str]]]:
    """The header and rows of `table` (for plain text or Markdown)."""
    labels = {name: split_name(name)[0] for name in order}
    peers = [name for name in order if name != base]
    header = ["figure", curve.x_label.split(" (")[0], "unit"] + [labels[n] for n in order]
    header += [f"{labels[p]}/{labels[base]}" for p in peers]
    if before is not None:
        header += [f"{labels[base]} before", "now/before"]
    header += ["bytes/reply", "target", "verdict"]
    by_row = {(v["figure"], v["x"]): v for v in verdicts}
    rows: list[list[str]] = []
    for figure in curve.figures:
        for x in numeric_xs(curve, settings):
            name = key(figure.name, x)
            stats = [summary.get(n, {}).get(name) for n in order]
            if all(not s or s.get("n", 0) == 0 for s in stats):
                continue
            present = [n for n, s in zip(order, stats, strict=True) if s and s.get("n", 0)]
            checked = wire.check(key(figure.wire, x), summary, present) if figure.wire else None
            refused = checked is not None and figure.exact and not checked.equal
            cells = []
            for n, s in zip(order, stats, strict=True):
                reason = _unsupported(curve, figure.unsupported, n)
                cells.append(reason if reason and not (s and s.get("n")) else ("REFUSED" if refused else cell(s)))
            base_median = median_of(summary, base, name)
            ratios = ["-" if refused else fmt(safe_ratio(median_of(summary, p, name), base_median)) for p in peers]
            row = [figure.label, f"{x:g}" if isinstance(x, (int, float)) else str(x), figure.unit] + cells + ratios
            if before is not None:
                then = median_of(before, base, name)
                row += [fmt(then), fmt(safe_ratio(base_median, then))]
            bytes_cell = checked.cell() if checked else ""
            if checked is not None and not checked.equal and not figure.exact:
                bytes_cell += " (differ by design)"
            verdict = by_row.get((figure.name, x))
            row += [bytes_cell, verdict["requirement"] if verdict else "", _verdict_text(verdict)]
            rows.append(row)
    return header, rows


def _verdict_text(verdict: dict[str, Any] | None) -> str:
    if not verdict:
        return ""
    if verdict["verdict"] == "refused":
        return "refused (unequal bytes)"
    return f"{verdict['verdict']} ({verdict['measured']})"


def refusals(curve: Curve, settings: dict[str, Any], summary: Summary, order: list[str]) -> list[str]:
    """A message for every refused row (implementations that sent unequal bytes)."""
    out = []
    for figure in curve.figures:
        if not figure.wire or not figure.exact:
            continue
        for x in numeric_xs(curve, settings):
            present = [n for n in order if summary.get(n, {}).get(key(figure.name, x), {}).get("n")]
            checked = wire.check(key(figure.wire, x), summary, present)
            if not checked.equal:
                out.append(checked.refusal(f"{figure.label} at {x}"))
    return out


def chart(
    curve: Curve,
    settings: dict[str, Any],
    summary: Summary,
    order: list[str],
    subtitle: str,
    before: Summary | None = None,
    base: str = "mcp_kit",
) -> str:
    """One SVG for the curve: a panel per charted figure, a line per implementation (and `before`)."""
    lines = {target.figure: target for target in curve.targets if target.line is not None}
    panels = []
    for figure in curve.figures:
        if not figure.chart:
            continue
        xs = [x for x in numeric_xs(curve, settings) if isinstance(x, (int, float))]
        series = []
        for name in order:
            points = [(float(x), median_of(summary, name, key(figure.name, x))) for x in xs]
            if any(not math.isnan(y) for _, y in points):
                series.append(charts.Series(name, points))
        if before is not None:
            points = [(float(x), median_of(before, base, key(figure.name, x))) for x in xs]
            if any(not math.isnan(y) for _, y in points):
                series.append(charts.Series(f"{base} before", points))
        target = lines.get(figure.name)
        panels.append(charts.Panel(
            title=figure.label,
            x_label=figure.x_label or curve.x_label,
            y_label=figure.unit,
            series=series,
            log_x=curve.log_x,
            log_y=figure.log_y,
            target=target.line if target else None,
            target_label=f"target at {target.x}: {target.requirement}" if target and target.x is not None
            else (f"target: {target.requirement}" if target else ""),
        ))
    return charts.line_panels(curve.title, panels, subtitle=subtitle)
