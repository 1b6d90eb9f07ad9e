"""The README's Performance table, the published results file and the chart drawn from it agree."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from types import ModuleType
from typing import Any

from .support import ROOT

BENCH = ROOT / "bench"
PUBLISHED = BENCH / "published" / "readme-full-run.json"
CHART = BENCH / "published" / "performance.svg"
SVG = "{http://www.w3.org/2000/svg}"


def load_chart_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_chart", BENCH / "harness" / "chart.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


chart = load_chart_module()


def readme_table() -> dict[str, list[str]]:
    """The Performance table's rows: label -> cells (mcp_kit, SDK, FastMCP, floor, SDK ÷ mcp_kit)."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Performance", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] and not set(cells[1]) <= {"-", ":", " "} and cells[1] != "mcp_kit":
            rows[cells[0]] = cells[1:]
    return rows


def test_the_readme_table_is_the_published_results_file() -> None:
    result: dict[str, Any] = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    rows = readme_table()
    assert list(rows) == [figure.label for figure in chart.FIGURES]
    for figure in chart.FIGURES:
        expected = []
        for impl in ("mcp_kit", "sdk", "fastmcp", "floor"):
            value = chart.median(result, impl, figure.key)
            expected.append("–" if value is None else chart.with_unit(value, figure.unit))
        ours, sdk = chart.median(result, "mcp_kit", figure.key), chart.median(result, "sdk", figure.key)
        assert ours is not None and sdk is not None
        expected.append(chart.ratio_text(figure, ours, sdk) if figure.charted else "")
        assert rows[figure.label] == expected, figure.label


def test_the_committed_chart_is_drawn_from_the_published_results(tmp_path: Path) -> None:
    out = tmp_path / "chart.svg"
    done = subprocess.run([sys.executable, str(BENCH / "chart.py"), str(PUBLISHED), "-o", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == CHART.read_bytes()  # regenerate with bench/chart.py when the figures change
    assert '](bench/published/performance.svg)' in (ROOT / "README.md").read_text(encoding="utf-8")


def test_each_charted_figure_is_a_panel_with_bars_in_proportion() -> None:
    result = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    root = ElementTree.fromstring(chart.render_svg(result))
    texts = [element.text for element in root.iter(f"{SVG}text")]
    bars = [float(rect.get("width", "0")) for rect in root.iter(f"{SVG}rect") if rect.get("height") == "14"]
    charted = [figure for figure in chart.FIGURES if figure.charted]
    assert all(figure.title in texts for figure in charted)
    assert len(bars) == 3 * len(charted)  # mcp_kit, SDK and FastMCP in every panel
    cold = [chart.median(result, impl, "stdio.cold_start_init_ms") for impl in ("mcp_kit", "sdk", "fastmcp")]
    first = bars[:3]
    assert abs(first[0] / first[2] - cold[0] / cold[2]) < 0.01 and first[2] == max(first)
    assert "201 ms" in texts and "77,957/s" in texts and "SDK ÷ mcp_kit = 3.2×" in " ".join(t or "" for t in texts)


def test_a_run_without_some_figures_charts_what_it_has() -> None:
    partial = {"mode": "quick", "summary": {"mcp_kit": {"stdio.seq_p50_us": {"median": 100.0}},
                                            "sdk": {"stdio.seq_p50_us": {"median": float("nan")}}}}
    root = ElementTree.fromstring(chart.render_svg(partial))
    bars = [rect for rect in root.iter(f"{SVG}rect") if rect.get("height") == "14"]
    assert len(bars) == 1  # one panel, one bar: an unmeasured figure is left out, NaN is not drawn
    assert re.search(r"medians of one quick run", ElementTree.tostring(root, encoding="unicode"))
