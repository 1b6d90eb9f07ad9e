"""bench/README.md's scaling-curve subsections: one published file, one chart and one Markdown block per curve.

A published curve (`bench/published/curve-<name>.json`) is one curve cut out of a `bench/scaling.py`
results file (or a committed baseline): its settings and per-repetition samples, where it came from,
whether it is the pre-change baseline, and optionally the `before` samples it is compared with. The
Markdown block and the SVG are computed from that file alone, so `bench/publish_curves.py --check` can
prove that the README, the file and the chart agree. Must not import `scaling.py` (the script passes
its curves in) nor measure anything.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import curve_report
from .curves import Curve, Summary
from .implementations import split_name, variant_name
from .stats import summary as summarise

LOOP_TITLES = {"uvloop": "uvloop + httptools", "asyncio": "stdlib asyncio + h11"}
PRE_CHANGE = "pre-change baseline"
CURRENT = "current"
BEGIN, END = "<!-- curve:{name} -->", "<!-- /curve:{name} -->"
ALL_BASES = ("mcp_kit", "sdk", "fastmcp", "floor")


def summarised(samples: dict[str, dict[str, list[float]]]) -> Summary:
    """Median/min/max per implementation and sample."""
    return {impl: {k: summarise(v) for k, v in figures.items()} for impl, figures in samples.items()}


def cut(result: dict[str, Any], name: str, source: str, status: str,
        before: tuple[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The published file of curve `name` from a scaling results dict (and the `before` run it is compared with)."""
    info = result["curves"][name]
    published: dict[str, Any] = {
        "kind": "scaling-curve",
        "curve": name,
        "status": status,
        "source": source,
        "mode": result["mode"],
        "started": result["started"],
        "machine": result.get("machine", {}),
        "loops": result.get("loops") or ["uvloop"],
        "implementations": {impl: {"label": meta.get("label", impl), "loop": meta.get("loop", split_name(impl)[1])}
                            for impl, meta in result["implementations"].items()},
        "settings": info["settings"],
        "elapsed_s": info.get("elapsed_s"),
        "samples": info["samples"],
        "errors": [{k: error.get(k) for k in ("impl", "phase", "rep", "error")}
                   for error in result.get("errors", []) if error.get("phase") == name],
        "before": None,
    }
    if before is not None:
        before_source, before_result = before
        published["before"] = {"source": before_source, "mode": before_result["mode"],
                               "started": before_result["started"],
                               "samples": before_result["curves"][name]["samples"]}
    return published


def command(curve: Curve, published: dict[str, Any]) -> str:
    """The command that measures this curve as it was measured."""
    parts = [".venv/bin/python", curve.command]
    if published["mode"] == "full":
        parts.append("--full")
    loops = published["loops"]
    if loops != ["uvloop"]:
        parts.append("--loops " + ",".join(loops))
    bases = list(dict.fromkeys(split_name(impl)[0] for impl in published["implementations"]))
    if set(bases) != set(ALL_BASES):
        parts.append("--impl " + ",".join(bases))
    defaults = json.loads(json.dumps(curve.settings.get(published["mode"], {})))  # tuples as lists, like the file
    for setting, value in published["settings"].items():
        if setting in defaults and defaults[setting] != value and isinstance(value, (list, int, float, str)):
            shown = ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)
            parts.append(f"--set {curve.name}.{setting}={shown}")
    return " ".join(parts)


def markdown(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table: the first column left-aligned, the rest right-aligned."""
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
    return "\n".join([line(header), line(["---"] + ["---:"] * (len(header) - 1))] + [line(row) for row in rows])


def _runs(summary: Summary) -> int:
    return max((stat.get("n", 0) for figures in summary.values() for stat in figures.values()), default=0)


def subtitle(curve: Curve, published: dict[str, Any], summary: Summary) -> str:
    """The chart's subtitle: what run it is, and (for a baseline) that it is the pre-change one."""
    what = "PRE-CHANGE BASELINE, " if published["status"] == PRE_CHANGE else ""
    return (f"{what}{published['mode']} settings, medians of {_runs(summary)} runs, "
            f"{published['machine'].get('cpus', '?')} CPUs, {published['started']}; {curve.command}")


def chart(curve: Curve, published: dict[str, Any]) -> str:
    """The curve's SVG, from the published file alone."""
    summary = summarised(published["samples"])
    before = summarised(published["before"]["samples"]) if published.get("before") else None
    return curve_report.chart(curve, published["settings"], summary, list(published["implementations"]),
                              subtitle(curve, published, summary), before)


def block(curve: Curve, published: dict[str, Any], chart_path: str, json_path: str) -> str:
    """The README block of one curve (between its markers): status, command, table per loop, verdicts, chart."""
    summary = summarised(published["samples"])
    before = summarised(published["before"]["samples"]) if published.get("before") else None
    impl_names = list(published["implementations"])
    loops = published["loops"]
    lines = [BEGIN.format(name=curve.name)]
    runs = f"{published['mode']} settings, medians of {_runs(summary)} runs, run {published['started']}"
    if published["status"] == PRE_CHANGE:
        lines.append(f"**Pre-change baseline**: measured on main before the changes to this curve ({runs}, "
                     f"from `{published['source']}`). The figures after the change replace this block.")
    else:
        lines.append(f"From one run: {runs}, from `{published['source']}`.")
    if published.get("before"):
        previous = published["before"]
        lines.append(f"The *mcp_kit before* columns and the dotted line are the pre-change baseline "
                     f"(`{previous['source']}`, run {previous['started']}, {previous['mode']} settings).")
    lines += ["", "```bash", command(curve, published), "```"]
    for loop in loops:
        order = [n for n in impl_names if split_name(n)[1] == loop]
        base = variant_name("mcp_kit", loop)
        if base not in order:
            base = order[0]
        verdicts = curve_report.evaluate(curve, published["settings"], summary, base)
        header, rows = curve_report.table_rows(curve, published["settings"], summary, order, base, verdicts,
                                               before if loop == loops[0] else None)
        lines.append("")
        if len(loops) > 1:
            lines += [f"Every server on {LOOP_TITLES.get(loop, loop)}:", ""]
        lines.append(markdown(header, rows))
        refused = curve_report.refusals(curve, published["settings"], summary, order)
        if refused:
            lines += [""] + [f"- {message}" for message in refused]
    for error in published["errors"]:
        lines += ["", f"- measurement failed: {error['impl']} rep {error['rep']}: {error['error']}"]
    lines += ["", f"![{curve.title}]({chart_path})", "",
              f"<sub>Table and chart: `{json_path}`; cells are medians (min-max) over repetitions, ratios are "
              f"peer ÷ mcp_kit.</sub>", END.format(name=curve.name)]
    return "\n".join(lines)


def replace_block(readme: str, name: str, text: str) -> str:
    """`readme` with the block of curve `name` (markers included) replaced by `text`."""
    pattern = re.compile(re.escape(BEGIN.format(name=name)) + r".*?" + re.escape(END.format(name=name)), re.S)
    if not pattern.search(readme):
        raise KeyError(f"the README has no {BEGIN.format(name=name)} ... {END.format(name=name)} block")
    return pattern.sub(lambda _: text, readme, count=1)


def blocks_in(readme: str) -> list[str]:
    """The names of the curves the README has blocks for, in order."""
    return re.findall(r"<!-- curve:([a-z_]+) -->", readme)
