"""Scaling curves: mcp_kit against the official SDK and FastMCP (and the floor) as the work grows.

    .venv/bin/python bench/scaling.py                        # every curve, quick settings, 3 repetitions
    .venv/bin/python bench/scaling.py --curve tools,cpu      # some curves
    .venv/bin/python bench/scaling.py --full --curve fanout  # the full settings of one curve
    .venv/bin/python bench/scaling.py --from-json FILE       # tables and charts again from a saved run
    .venv/bin/python bench/scaling.py --before bench/baselines/scaling-before.json   # + before columns

Curves: tools (tools registered), payload (echo size), clients (concurrent HTTP clients), sessions
(idle and busy HTTP sessions), fanout (subscribers to one resource), cpu (CPU-bound sync tools).
Each prints a table (medians over repetitions, min-max, ratios to mcp_kit, bytes per reply, the
issue's target and its verdict) and writes one SVG chart; the raw figures go to
bench/results/<stamp>-scaling-<mode>.json and the charts to bench/results/charts/<stamp>/.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (
    curve_cpu,
    curve_fanout,
    curve_http,
    curve_payload,
    curve_report,
    curve_tools,
    implementations,
    processes,
)
from harness.curves import Curve, Summary
from harness.runner import Run, machine_info, rotated, without_nan
from harness.stats import summary as summarise

logger = logging.getLogger("bench")
RESULTS_DIR = implementations.BENCH_DIR / "results"
CURVES: dict[str, Curve] = {
    curve.name: curve
    for curve in (
        curve_tools.CURVE,
        curve_payload.CURVE,
        curve_http.CLIENTS,
        curve_http.SESSIONS,
        curve_fanout.CURVE,
        curve_cpu.CURVE,
    )
}
LOOP_TITLES = {"uvloop": "uvloop + httptools", "asyncio": "stdlib asyncio + h11"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(prog="bench/scaling.py", description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_const", dest="mode", const="quick", help="quick settings (default)")
    size.add_argument("--full", action="store_const", dest="mode", const="full", help="the issue's full settings")
    parser.add_argument("--curve", default="all", help="comma-separated subset of " + ",".join(CURVES))
    parser.add_argument("--impl", default=",".join(implementations.BASE_NAMES),
                        help="comma-separated subset of " + ",".join(implementations.BASE_NAMES))
    parser.add_argument("--loops", default="uvloop", help="event loops: uvloop, asyncio or both (default uvloop)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions; the tables show medians (default 3)")
    parser.add_argument("--set", action="append", default=[], metavar="CURVE.KEY=VALUE",
                        help="override one setting, e.g. sessions.busy=250,500,1000,2000 (repeatable)")
    parser.add_argument("--out", type=Path, help="results JSON (default bench/results/<stamp>-scaling-<mode>.json)")
    parser.add_argument("--charts", type=Path, help="directory for the SVGs (default bench/results/charts/<stamp>)")
    parser.add_argument("--before", type=Path, help="a previous results JSON: adds its mcp_kit figures as columns")
    parser.add_argument("--from-json", type=Path, help="print tables and write charts from a saved run; no measuring")
    parser.add_argument(
        "--save-baseline",
        type=Path,
        metavar="FILE",
        help="also write the run's samples (no logs, no timings) to FILE, e.g. bench/baselines/NAME.json, "
        "for later --before comparisons",
    )
    parser.add_argument("--no-setup", action="store_true", help="do not create or repair bench/.venvs")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.set_defaults(mode="quick")
    return parser.parse_args(argv)


def _parse_value(text: str) -> Any:
    if "," in text:
        return tuple(_parse_value(part) for part in text.split(",") if part)
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def settings_for(curve: Curve, mode: str, overrides: list[str]) -> dict[str, Any]:
    """The curve's settings for `mode` with `--set CURVE.KEY=VALUE` overrides applied."""
    settings = dict(curve.settings[mode])
    for override in overrides:
        name, _, assignment = override.partition(".")
        setting, _, value = assignment.partition("=")
        if name != curve.name:
            continue
        if setting not in settings:
            raise SystemExit(f"--set {override}: {curve.name} has no setting {setting!r} ({', '.join(settings)})")
        parsed = _parse_value(value)
        settings[setting] = parsed if not isinstance(settings[setting], tuple) or isinstance(parsed, tuple) else (
            parsed,)
    return settings


def measure(args: argparse.Namespace, curves: list[Curve]) -> dict[str, Any]:
    """Run every curve, implementations interleaved within each repetition; return the results dictionary."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    log_dir = RESULTS_DIR / "logs" / f"{stamp}-scaling-{args.mode}"
    log_dir.mkdir(parents=True, exist_ok=True)
    loops = tuple(loop.strip() for loop in args.loops.split(",") if loop.strip())
    names = [name.strip() for name in args.impl.split(",") if name.strip()]
    impls = implementations.prepare(names, setup_peers=not args.no_setup, loops=loops)
    for impl in impls:
        logger.info("%-16s %s", impl.name, "ready" if impl.available else f"UNAVAILABLE: {impl.reason}")
    versions: dict[str, dict[str, str]] = {}
    for impl in impls:
        if impl.available and str(impl.python) not in versions:
            versions[str(impl.python)] = {dist: implementations.package_version(impl.python, dist)
                                          for dist in ("mcp", "fastmcp", "mcp-kit", "uvloop", "httptools")}
    run = Run(impls, log_dir)
    started = time.monotonic()
    result: dict[str, Any] = {
        "kind": "scaling",
        "mode": args.mode,
        "started": stamp,
        "machine": machine_info(),
        "loops": list(loops),
        "implementations": {
            impl.name: {"label": impl.label, "available": impl.available, "reason": impl.reason,
                        "python": str(impl.python), "loop": impl.loop, "versions": versions.get(str(impl.python), {})}
            for impl in impls
        },
        "curves": {},
    }
    try:
        for curve in curves:
            settings = settings_for(curve, args.mode, args.set)
            runnable = [impl for impl in impls if impl.available and curve.supports(impl)]
            logger.info("curve %s: %s x%d (%s)", curve.name, ", ".join(i.name for i in runnable), args.reps,
                        json.dumps(settings, default=str))
            curve_started = time.monotonic()
            for rep in range(args.reps):
                for impl in rotated(runnable, rep):
                    figures = run.attempt(impl, curve.name, rep,
                                          lambda err, impl=impl, curve=curve, settings=settings: curve.measure(
                                              impl, settings, err))
                    if figures:
                        run.record(impl.name, curve.name, figures)
            result["curves"][curve.name] = {"settings": settings,
                                            "elapsed_s": round(time.monotonic() - curve_started, 1)}
    except KeyboardInterrupt:
        logger.error("interrupted; stopping servers")
    finally:
        processes.stop_all()
    for name, info in result["curves"].items():
        prefix = name + "."
        info["samples"] = {
            impl: {k[len(prefix):]: v for k, v in samples.items() if k.startswith(prefix)}
            for impl, samples in run.samples.items()
        }
    result.update(
        elapsed_s=round(time.monotonic() - started, 1),
        errors=run.errors,
        phase_seconds=run.phase_seconds,
        logs=str(log_dir),
    )
    return result


def summarised(info: dict[str, Any]) -> Summary:
    """Median/min/max per implementation and sample of one curve's stored samples."""
    return {impl: {k: summarise(v) for k, v in samples.items()} for impl, samples in info.get("samples", {}).items()}


def _load_before(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    data = json.loads(path.read_text())
    if data.get("kind") != "scaling":
        raise SystemExit(f"{path} is not a scaling results file")
    return data


def report(result: dict[str, Any], before_data: dict[str, Any] | None, chart_dir: Path | None,
           baseline: str = "mcp_kit") -> None:
    """Print every curve's table with its verdicts and write its chart; store summaries and verdicts in `result`."""
    impl_names = list(result["implementations"])
    loops = result.get("loops") or ["uvloop"]
    mode = result["mode"]
    for name, info in result["curves"].items():
        curve = CURVES[name]
        settings = info["settings"]
        summary = info["summary"] = summarised(info)
        before = summarised(before_data["curves"][name]) if before_data and name in before_data["curves"] else None
        info["targets"], info["refused"] = {}, {}
        print(f"\n=== {curve.title} ===")
        print(f"command: .venv/bin/python {curve.command}{' --full' if mode == 'full' else ''}"
              f"  ({mode} settings: {json.dumps(settings, default=str)}; {info.get('elapsed_s', '?')} s)")
        for note in curve.notes:
            print(f"note: {note}")
        for loop in loops:
            order = [n for n in impl_names if implementations.split_name(n)[1] == loop]
            base = implementations.variant_name(baseline, loop)
            if base not in order:
                base = order[0]
            verdicts = curve_report.evaluate(curve, settings, summary, base)
            info["targets"][loop] = verdicts
            info["refused"][loop] = curve_report.refusals(curve, settings, summary, order)
            if len(loops) > 1:
                print(f"\n-- event loop: {LOOP_TITLES.get(loop, loop)} --")
            print()
            print(curve_report.table(curve, settings, summary, order, base, verdicts,
                                     before if loop == loops[0] else None))
            for message in info["refused"][loop]:
                print(f"  {message}")
        if chart_dir is not None:
            chart_dir.mkdir(parents=True, exist_ok=True)
            subtitle = (
                f"{mode} settings, medians of "
                f"{max((s.get('n', 0) for impl in summary.values() for s in impl.values()), default=0)} "
                f"runs, {result['machine'].get('cpus')} CPUs, {result['started']}; "
                f"bench/{curve.command.split('bench/')[-1]}"
            )
            svg = curve_report.chart(curve, settings, summary, impl_names, subtitle, before, baseline)
            path = chart_dir / f"{name}.svg"
            path.write_text(svg)
            info["chart"] = str(path)
            print(f"chart: {path}")


def baseline_of(result: dict[str, Any]) -> dict[str, Any]:
    """What a committed baseline keeps: settings and per-repetition samples of each curve, and where they came from."""
    return {
        "kind": "scaling",
        "mode": result["mode"],
        "started": result["started"],
        "machine": result["machine"],
        "loops": result["loops"],
        "implementations": {name: {"label": info["label"], "loop": info["loop"], "versions": info.get("versions", {})}
                            for name, info in result["implementations"].items()},
        "curves": {name: {"settings": info["settings"], "elapsed_s": info.get("elapsed_s"),
                          "samples": info["samples"]}
                   for name, info in result["curves"].items()},
        "errors": [{k: error[k] for k in ("impl", "phase", "rep", "error")} for error in result["errors"]],
    }


def main(argv: list[str] | None = None) -> int:
    """Measure (or load) the curves, print the tables, write the JSON and the charts."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(message)s",
                        stream=sys.stderr)
    before = _load_before(args.before)
    if args.from_json:
        result = json.loads(args.from_json.read_text())
        chart_dir = args.charts or RESULTS_DIR / "charts" / f"{result['started']}-{result['mode']}"
        report(result, before, chart_dir)
        return 0
    wanted = list(CURVES) if args.curve == "all" else [name.strip() for name in args.curve.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in CURVES]
    if unknown:
        raise SystemExit(f"unknown curve(s) {', '.join(unknown)}; choose from {', '.join(CURVES)}")
    os.environ["BENCH_TOOL_STYLE"] = "async"
    result = measure(args, [CURVES[name] for name in wanted])
    chart_dir = args.charts or RESULTS_DIR / "charts" / f"{result['started']}-scaling-{args.mode}"
    print(f"\nmcp_kit scaling curves, {args.mode} settings, {args.reps} repetition(s), "
          f"{result['machine']['cpus']} CPUs, Python {result['machine']['python']}, {result['elapsed_s']:.0f} s")
    print("cells: median (min-max) over repetitions; ratio columns: peer median / mcp_kit median; "
          "bytes/reply: JSON-RPC bytes per reply, response ids not counted")
    report(result, before, chart_dir)
    out = args.out or RESULTS_DIR / f"{result['started']}-scaling-{args.mode}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(without_nan(result), indent=1, default=str))
    if args.save_baseline:
        args.save_baseline.parent.mkdir(parents=True, exist_ok=True)
        args.save_baseline.write_text(json.dumps(without_nan(baseline_of(result)), indent=1, default=str) + "\n")
        print(f"baseline: {args.save_baseline}")
    if result["errors"]:
        print(f"\n{len(result['errors'])} measurement(s) failed (see {out}):")
        for error in result["errors"]:
            print(f"  {error['impl']} {error['phase']} rep {error['rep']}: {error['error']}")
    print(f"\nraw figures: {out}")
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
