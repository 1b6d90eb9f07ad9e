"""The README's Performance table (and its copy in bench/README.md), the published results file and the chart drawn
from it agree."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.helpers.support import ROOT

BENCH = ROOT / "bench"
PUBLISHED = BENCH / "published" / "readme-full-run.json"
CHART = BENCH / "published" / "performance.svg"
SVG = "{http://www.w3.org/2000/svg}"
IMPLEMENTATIONS = {"mcp_kit", "sdk", "fastmcp", "floor", "mcp_kit@asyncio", "sdk@asyncio", "fastmcp@asyncio",
                   "floor@asyncio"}


def load_chart_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_chart", BENCH / "harness" / "chart.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


chart = load_chart_module()


def published() -> dict[str, Any]:
    return json.loads(PUBLISHED.read_text(encoding="utf-8"))


def performance_section() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Performance", 1)[1].split("\n## ", 1)[0]


def bench_published_section() -> str:
    """bench/README.md's copy of the headline run, beside what its figures mean."""
    text = (BENCH / "README.md").read_text(encoding="utf-8")
    return text.split("\n### The headline run", 1)[1].split("\n### ", 1)[0]


def readme_table() -> tuple[list[str], dict[str, list[str]]]:
    """The headline table's header and rows (label -> the other cells), read from the README's Markdown."""
    start = performance_section().index("\n| " + " | ".join(chart.HEADER) + " |") + 1
    lines = performance_section()[start:].split("\n\n", 1)[0].splitlines()
    table = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]
    return table[0], {cells[0]: cells[1:] for cells in table[2:]}


def value_of(cell: str) -> float:
    """'77,957/s' -> 77957.0, '3.8 ms' -> 3.8, '93 B' -> 93.0, '6.3× more' -> 6.3."""
    match = re.match(r"[0-9][0-9,]*(\.[0-9]+)?", cell)
    assert match, cell
    return float(match.group(0).replace(",", ""))


def close(shown: float, exact: float) -> bool:
    """`shown` is `exact` as the README rounds it (two decimals, three significant figures or whole numbers)."""
    return abs(shown - exact) <= max(0.006, 0.006 * abs(exact), 0.51 if abs(exact) >= 100 else 0)


def test_the_published_file_is_one_full_run_of_every_server_on_both_loops() -> None:
    result = published()
    assert result["mode"] == "full"
    assert set(result["summary"]) == IMPLEMENTATIONS
    assert result["refused"] == {"uvloop": [], "asyncio": []}
    for figure in chart.FIGURES:  # every cell is a median of two repetitions or more, but the one leak check
        for impl in chart.COLUMNS if figure.key != "stdio.rss_growth_pct" else ():
            stat = result["summary"][impl].get(figure.key)
            assert stat is None or stat["n"] >= 2, (figure.label, impl)
    section = " ".join(performance_section().split())
    for error in result["errors"]:  # a measurement that failed is named under the table
        assert error["impl"] == "mcp_kit" and error["phase"] in ("http-sse", "http-json")
        assert f"{error['phase'][5:].upper()} repetition {error['rep']}" in section, error


def test_the_readme_table_is_the_published_results_file() -> None:
    result = published()
    assert "| " + " | ".join(chart.HEADER) + " |" in performance_section()
    assert chart.markdown_table(result) in performance_section()  # regenerate: bench/chart.py ... --table
    header, rows = readme_table()
    assert header == [cell.strip() for cell in chart.HEADER]
    assert list(rows) == [figure.label for figure in chart.FIGURES]
    for figure in chart.FIGURES:
        cells = rows[figure.label]
        assert "REFUSED" not in " ".join(cells), figure.label
        medians = {impl: chart.median(result, impl, figure.key) for impl in chart.COLUMNS}
        for impl, shown in zip(chart.COLUMNS, cells[1:7], strict=True):
            if medians[impl] is None:
                assert shown == "–", (figure.label, impl)
            else:
                assert close(value_of(shown), medians[impl]), (figure.label, impl, shown, medians[impl])
        ours = medians["mcp_kit"]
        for peer, shown in (("sdk", cells[7]), ("sdk@asyncio", cells[8])):
            theirs = medians[peer]
            if not figure.charted:
                assert shown == ""
                continue
            assert ours and theirs
            ratio = theirs / ours if figure.lower_is_better else ours / theirs
            assert abs(value_of(shown) - ratio) <= 0.051 * ratio + 0.5 * (ratio >= 10), (figure.label, peer, shown)
            assert shown.endswith("more") != figure.lower_is_better


def test_every_timed_row_shows_equal_bytes_from_every_server() -> None:
    result = published()
    _, rows = readme_table()
    for figure in chart.FIGURES:
        cell = rows[figure.label][0]
        if figure.wire is None:
            assert cell == "–"
            continue
        sent = {impl: chart.median(result, impl, figure.wire) for impl in chart.COLUMNS
                if chart.median(result, impl, figure.key) is not None}
        assert len(sent) >= 5 and None not in sent.values(), figure.label
        if figure.exact:
            assert len(set(sent.values())) == 1, (figure.label, sent)
            assert cell == f"{chart.number(next(iter(sent.values())))} B"
            assert value_of(cell) >= 90  # the echo's reply, not an empty figure
        else:
            assert len(set(sent.values())) > 1 and cell.endswith("each its own")


def test_the_committed_chart_is_drawn_from_the_published_results(tmp_path: Path) -> None:
    out = tmp_path / "chart.svg"
    done = subprocess.run([sys.executable, str(BENCH / "chart.py"), str(PUBLISHED), "-o", str(out), "--table"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == CHART.read_bytes()  # regenerate with bench/chart.py when the figures change
    assert done.stdout in performance_section()
    assert '](bench/published/performance.svg)' in performance_section()
    assert done.stdout in bench_published_section()  # bench/README.md's copy is the same table
    assert '](published/performance.svg)' in bench_published_section()


def test_each_charted_figure_is_a_panel_with_bars_in_proportion() -> None:
    result = published()
    root = ElementTree.fromstring(chart.render_svg(result))
    texts = [element.text or "" for element in root.iter(f"{SVG}text")]
    bars = [rect for rect in root.iter(f"{SVG}rect") if rect.get("height") == "14"]
    charted = [figure for figure in chart.FIGURES if figure.charted]
    assert all(figure.title in texts for figure in charted)
    present = [[impl for impl in chart.COLUMNS if chart.median(result, impl, figure.key) is not None]
               for figure in charted]
    assert len(bars) == sum(len(impls) for impls in present)
    assert present[0] == list(chart.COLUMNS)  # every server has a cold start, the floor included
    cold = [chart.median(result, impl, "stdio.cold_start_init_ms") for impl in chart.COLUMNS]
    widths = [float(rect.get("width", "0")) for rect in bars[: len(chart.COLUMNS)]]
    longest = max(cold)  # type: ignore[type-var]
    for width, value in zip(widths, cold, strict=True):
        assert value is not None and abs(width / max(widths) - value / longest) < 0.01
    assert [rect.get("fill") for rect in bars[: len(chart.COLUMNS)]] == [chart.COLOURS[i] for i in chart.COLUMNS]
    first = chart.FIGURES[0]
    ours, sdk, pip_sdk = cold[0], cold[1], cold[3]
    assert ours and sdk and pip_sdk
    assert chart.with_unit(ours, "ms") in texts
    assert (f"SDK ÷ mcp_kit: {chart.advantage(first, ours, sdk)}× same loop, "
            f"{chart.advantage(first, ours, pip_sdk)}× asyncio") in texts


def test_a_run_without_some_figures_charts_what_it_has() -> None:
    partial = {"mode": "quick", "summary": {"mcp_kit": {"stdio.seq_p50_us": {"median": 100.0}},
                                            "sdk": {"stdio.seq_p50_us": {"median": float("nan")}}}}
    root = ElementTree.fromstring(chart.render_svg(partial))
    bars = [rect for rect in root.iter(f"{SVG}rect") if rect.get("height") == "14"]
    assert len(bars) == 1  # one panel, one bar: an unmeasured figure is left out, NaN is not drawn
    assert re.search(r"medians of one quick run", ElementTree.tostring(root, encoding="unicode"))


def test_a_row_whose_servers_sent_unequal_bytes_is_refused_not_shown() -> None:
    result = published()
    assert "Streamable HTTP, JSON, CPU per call" in chart.render_svg(result)
    unequal = copy.deepcopy(result)
    unequal["summary"]["sdk"]["http_json.c16_wire_payload_bytes"]["median"] += 80  # as if it sent structuredContent
    figure = next(f for f in chart.FIGURES if f.key == "http_json.c16_cpu_per_call_us")
    cells = chart.row_cells(unequal, figure)
    assert cells[1] == "unequal: REFUSED" and cells[2:8] == ["REFUSED"] * 6 and cells[8:] == ["", ""]
    assert "Streamable HTTP, JSON, CPU per call" not in chart.render_svg(unequal)
