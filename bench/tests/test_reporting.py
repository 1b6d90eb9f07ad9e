"""The harness's own logic: the equal-bytes refusal, target verdicts, tables and SVG charts (no servers)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree

from harness import charts, curve_report, report, targets, wire
from harness.curves import Curve, Figure, against_own, at_most, peer_plus, ratio_to_peer
from harness.metrics import Metric


def stat(value: float) -> dict[str, float]:
    return {"median": value, "min": value, "max": value, "n": 1}


def test_equal_bytes_pass_and_unequal_bytes_name_every_implementation() -> None:
    summary = {"mcp_kit": {"b": stat(93)}, "sdk": {"b": stat(93)}, "fastmcp": {"b": stat(134)}}
    same = wire.check("b", summary, ["mcp_kit", "sdk"])
    assert same.equal and same.cell() == "93"
    differ = wire.check("b", summary, ["mcp_kit", "sdk", "fastmcp"])
    assert not differ.equal
    assert differ.cell() == "93/93/134"
    message = differ.refusal("echo p50")
    assert message.startswith("REFUSED echo p50") and "fastmcp 134" in message and "mcp_kit 93" in message


def test_headline_table_refuses_a_row_with_unequal_bytes_and_shows_metadata_rows() -> None:
    metrics = [
        Metric("seq", "echo p50", "us", True, "echo_bytes"),
        Metric("list", "tools/list p50", "us", True, "list_bytes", exact=False),
    ]
    summary = {
        "mcp_kit": {"seq": stat(50), "echo_bytes": stat(93), "list": stat(40), "list_bytes": stat(422)},
        "sdk": {"seq": stat(500), "echo_bytes": stat(132), "list": stat(400), "list_bytes": stat(450)},
    }
    text = report.table(metrics, summary, ["mcp_kit", "sdk"], "mcp_kit")
    echo_row = next(line for line in text.splitlines() if line.startswith("echo p50"))
    assert echo_row.count("REFUSED") == 2 and "500" not in echo_row
    list_row = next(line for line in text.splitlines() if line.startswith("tools/list p50"))
    assert "10.0" in list_row and "422/450 (framework metadata)" in list_row
    assert report.refusals(metrics, summary, ["mcp_kit", "sdk"]) == [
        "REFUSED echo p50: bytes per reply differ (mcp_kit 93, sdk 132); the implementations did unequal work"
    ]
    summary["sdk"]["echo_bytes"] = stat(93)
    assert report.refusals(metrics, summary, ["mcp_kit", "sdk"]) == []


def test_headline_targets_use_the_peer_of_the_same_event_loop_and_refuse_unequal_work() -> None:
    metric = Metric("stdio.seq_p50_us", "echo p50", "us", True, "stdio.wire_echo_bytes")
    summary = {
        "mcp_kit@asyncio": {"stdio.seq_p50_us": stat(100), "stdio.wire_echo_bytes": stat(93)},
        "sdk@asyncio": {"stdio.seq_p50_us": stat(500), "stdio.wire_echo_bytes": stat(93)},
        "sdk": {"stdio.seq_p50_us": stat(300), "stdio.wire_echo_bytes": stat(93)},
    }
    rows = {row["metric"]: row for row in targets.evaluate(summary, "mcp_kit@asyncio", [metric])}
    row = rows["stdio.seq_p50_us"]
    assert row["peer_value"] == 500 and row["advantage"] == 5 and row["passed"] is True
    summary["sdk@asyncio"]["stdio.wire_echo_bytes"] = stat(132)
    row = {r["metric"]: r for r in targets.evaluate(summary, "mcp_kit@asyncio", [metric])}["stdio.seq_p50_us"]
    assert row["passed"] is None and row["refused"].startswith("REFUSED")


def _curve(targets_: list) -> Curve:
    return Curve(
        name="demo",
        title="Demo",
        x_label="n",
        xs=lambda settings: list(settings["ns"]),
        figures=[
            Figure("ms", "latency", "ms", True, "bytes"),
            Figure("mib", "growth", "MiB", True, unsupported={"fastmcp": "no such thing"}),
        ],
        settings={"quick": {"ns": (1, 10, 100)}},
        measure=lambda impl, settings, stderr: {},
        command="bench/scaling.py --curve demo",
        targets=targets_,
    )


def _summary() -> dict:
    return {
        "mcp_kit": {"ms@1": stat(2), "ms@10": stat(3), "ms@100": stat(5), "mib@1": stat(1), "mib@10": stat(12),
                    "bytes@1": stat(93), "bytes@10": stat(93), "bytes@100": stat(93)},
        "sdk": {"ms@1": stat(20), "ms@10": stat(30), "ms@100": stat(50), "mib@1": stat(1), "mib@10": stat(1),
                "bytes@1": stat(93), "bytes@10": stat(93), "bytes@100": stat(120)},
    }


def test_curve_verdicts_for_each_kind_of_target() -> None:
    curve = _curve([
        at_most("ms", 100, 4, "ms"),
        ratio_to_peer("ms", 10, "sdk", 10, higher=False),
        ratio_to_peer("ms", 100, "sdk", 0.5, higher=False),
        peer_plus("mib", None, "sdk", 10, "MiB"),
        against_own("ms", 10, 1, 2),
    ])
    verdicts = curve_report.evaluate(curve, {"ns": (1, 10, 100)}, _summary(), "mcp_kit")
    by = [(v["figure"], v["x"], v["verdict"]) for v in verdicts]
    assert by == [
        ("ms", 100, "not met"),  # 5 ms > 4 ms
        ("ms", 10, "met"),  # 3/30 = 0.1 <= 10
        ("ms", 100, "refused"),  # 93 vs 120 bytes per reply
        ("mib", 10, "not met"),  # None -> the last x with a figure (10): 12 - 1 = 11 > 10
        ("ms", 10, "met"),  # 3 / 2 = 1.5 <= 2
    ]
    assert verdicts[0]["measured"] == "5 ms"
    assert verdicts[3]["measured"] == "sdk +11 MiB"


def test_curve_table_says_what_a_framework_lacks_and_compares_with_before() -> None:
    curve = _curve([at_most("ms", 100, 4, "ms")])
    summary = _summary()
    summary["fastmcp"] = {"ms@1": stat(40), "bytes@1": stat(93)}
    verdicts = curve_report.evaluate(curve, {"ns": (1, 10, 100)}, summary, "mcp_kit")
    before = {"mcp_kit": {"ms@100": stat(10)}}
    text = curve_report.table(curve, {"ns": (1, 10, 100)}, summary, ["mcp_kit", "sdk", "fastmcp"], "mcp_kit",
                              verdicts, before)
    lines = text.splitlines()
    assert "mcp_kit before" in lines[0] and "now/before" in lines[0]
    growth = next(line for line in lines if line.startswith("growth") and " 10 " in line)
    assert "no such thing" in growth
    last = next(line for line in lines if line.startswith("latency") and " 100 " in line)
    assert "REFUSED" in last and "not met (5 ms)" in last and "0.50" in last  # 5 / 10 before


def test_charts_are_well_formed_svg_with_every_series_and_survive_missing_data() -> None:
    panel = charts.Panel("latency", "n", "ms", [
        charts.Series("mcp_kit", [(1, 2.0), (10, 3.0), (100, math.nan)]),
        charts.Series("sdk@asyncio", [(1, 20.0), (10, 30.0), (100, 50.0)]),
        charts.Series("mcp_kit before", [(1, 4.0), (10, 6.0)]),
    ], log_y=True, target=4, target_label="target")
    empty = charts.Panel("nothing", "n", "ms", [charts.Series("sdk", [(1, math.nan)])])
    svg = charts.line_panels("Demo <curve>", [panel, empty], subtitle="quick & dirty")
    root = ElementTree.fromstring(svg)
    texts = [element.text for element in root.iter() if element.tag.endswith("text")]
    assert "Demo <curve>" in texts and "quick & dirty" in texts and "no data" in texts
    polylines = [element for element in root.iter() if element.tag.endswith("polyline")]
    assert len(polylines) == 3
    dashes = {element.get("stroke-dasharray") for element in polylines}
    assert dashes == {None, "6,3", "2,3"}  # uvloop solid, asyncio dashed, before dotted
    bars = charts.bar_chart("Headline", ["calls/s", "RSS"], {"mcp_kit": [9000, 38], "sdk": [900, math.nan]},
                            "", log=True)
    root = ElementTree.fromstring(bars)
    assert len([e for e in root.iter() if e.tag.endswith("rect")]) == 1 + 3  # background + three bars
