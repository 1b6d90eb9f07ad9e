"""Benchmark mcp_kit against the official MCP SDK and FastMCP (and a pure-Python floor), side by side.

    .venv/bin/python bench/run.py --quick     # < 2 minutes
    .venv/bin/python bench/run.py --full      # the figures for the README (~15 minutes)

Every server is a black box started as a subprocess; peers live in their own venvs under bench/.venvs/.
Each runs twice, on uvloop + httptools and on the stdlib asyncio loop + h11 (`--loops`), so the
framework's own cost shows apart from the event loop's. Implementations are interleaved within each
repetition; one table per event loop shows medians with min-max across repetitions, each peer's
ratio to mcp_kit and the bytes per reply (a row whose implementations sent unequal bytes is refused).
Raw figures go to bench/results/<stamp>-<mode>.json, and their
chart (mcp_kit vs the SDK and FastMCP, one panel per figure) beside it as <stamp>-<mode>.svg.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (
    chart,
    http_suite,
    implementations,
    legacy_sse,
    metrics,
    processes,
    report,
    stdio_suite,
    targets,
)
from harness.metrics import all_metrics
from harness.runner import Run, machine_info, rotated, without_nan
from harness.stats import summary as summarise

logger = logging.getLogger("bench")
LOOP_TITLES = {"uvloop": "uvloop + httptools", "asyncio": "stdlib asyncio + h11"}
RESULTS_DIR = implementations.BENCH_DIR / "results"
ALL_IMPLEMENTATIONS = list(implementations.BASE_NAMES)


@dataclass(frozen=True)
class Mode:
    """Sizes of one benchmark mode."""

    cold_reps: int
    stdio_reps: int
    http_reps: int
    stdio: stdio_suite.StdioPlan
    leak_first: int
    leak_total: int
    http: http_suite.HttpPlan


MODES = {
    "quick": Mode(
        cold_reps=2,
        stdio_reps=1,
        http_reps=1,
        stdio=stdio_suite.StdioPlan(
            warmup_calls=50,
            sequential_calls=400,
            list_calls=50,
            read_calls=50,
            pipelined_calls=1000,
            window=64,
            big_calls=2,
            big_bytes=1 << 20,
            phase_timeout_s=60,
        ),
        leak_first=200,
        leak_total=600,
        http=http_suite.HttpPlan(
            concurrencies=(1, 16, 64),
            warmup_calls=2,
            duration_s=0.25,
            max_calls=200_000,
            start_timeout_s=30,
        ),
    ),
    "full": Mode(
        cold_reps=10,
        stdio_reps=5,
        http_reps=3,
        stdio=stdio_suite.StdioPlan(
            warmup_calls=500,
            sequential_calls=3000,
            list_calls=500,
            read_calls=500,
            pipelined_calls=20000,
            window=64,
            big_calls=10,
            big_bytes=1 << 20,
            phase_timeout_s=300,
        ),
        leak_first=10_000,
        leak_total=100_000,
        http=http_suite.HttpPlan(
            concurrencies=(1, 16, 64),
            warmup_calls=20,
            duration_s=3.0,
            max_calls=2_000_000,
            start_timeout_s=30,
        ),
    ),
}


def run_all(run: Run, mode: Mode, do_stdio: bool, do_http: bool) -> None:
    """All phases, implementations interleaved inside each repetition."""
    stdio_impls = [
        impl for impl in run.impls if impl.available and "stdio" in impl.transports
    ]
    http_impls = [
        impl for impl in run.impls if impl.available and "http" in impl.transports
    ]
    if do_stdio:
        logger.info("stdio: priming (byte-compiles each server once, not measured)")
        for impl in stdio_impls:
            run.attempt(
                impl,
                "prime",
                0,
                lambda err, impl=impl: stdio_suite.cold_start(impl, err, 120),
            )
        logger.info("stdio: cold start x%d", mode.cold_reps)
        for rep in range(mode.cold_reps):
            for impl in rotated(stdio_impls, rep):
                figures = run.attempt(
                    impl,
                    "cold",
                    rep,
                    lambda err, impl=impl: stdio_suite.cold_start(impl, err, 60),
                )
                if figures:
                    run.record(impl.name, "stdio", figures)
        logger.info("stdio: sessions x%d", mode.stdio_reps)
        for rep in range(mode.stdio_reps):
            for impl in rotated(stdio_impls, rep):
                figures = run.attempt(
                    impl,
                    "session",
                    rep,
                    lambda err, impl=impl: stdio_suite.session(impl, mode.stdio, err),
                )
                if figures:
                    run.record(impl.name, "stdio", figures)
        logger.info(
            "stdio: leak check (%d then %d calls)", mode.leak_first, mode.leak_total
        )
        for impl in stdio_impls:
            figures = run.attempt(
                impl,
                "leak",
                0,
                lambda err, impl=impl: stdio_suite.leak_check(
                    impl,
                    mode.leak_first,
                    mode.leak_total,
                    mode.stdio.window,
                    err,
                    mode.stdio.phase_timeout_s * 4,
                ),
            )
            if figures:
                run.record(impl.name, "stdio", figures)
    if do_http:
        logger.info("Streamable HTTP x%d (SSE and JSON responses)", mode.http_reps)
        for rep in range(mode.http_reps):
            for impl in rotated(http_impls, rep):
                for json_response in (False, True):
                    label = "json" if json_response else "sse"
                    figures = run.attempt(
                        impl,
                        f"http-{label}",
                        rep,
                        lambda err, impl=impl, js=json_response: http_suite.run(
                            impl, js, mode.http, err
                        ),
                    )
                    if figures:
                        run.record(impl.name, f"http_{label}", figures)
        logger.info("legacy HTTP+SSE x%d", mode.http_reps)
        legacy_impls = [impl for impl in http_impls if impl.base != "floor"]  # the floor has no /sse
        for rep in range(mode.http_reps):
            for impl in rotated(legacy_impls, rep):
                figures = run.attempt(
                    impl,
                    "legacy-sse",
                    rep,
                    lambda err, impl=impl: legacy_sse.run(
                        impl,
                        metrics.LEGACY_CONCURRENCIES,
                        mode.http.duration_s,
                        mode.http.max_calls,
                        mode.http.start_timeout_s,
                        err,
                    ),
                )
                if figures:
                    run.record(impl.name, "legacy_sse", figures)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        prog="bench/run.py", description=__doc__.split("\n\n")[0]
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--quick",
        action="store_const",
        dest="mode",
        const="quick",
        help="small run, < 2 minutes (default)",
    )
    size.add_argument(
        "--full",
        action="store_const",
        dest="mode",
        const="full",
        help="the full run (~15 minutes)",
    )
    parser.add_argument(
        "--impl",
        default=",".join(ALL_IMPLEMENTATIONS),
        help="comma-separated subset of " + ",".join(ALL_IMPLEMENTATIONS),
    )
    parser.add_argument(
        "--loops",
        default=",".join(implementations.LOOPS),
        help="event loops to run every server on: uvloop (with httptools), asyncio (stdlib loop, h11); "
        "default both",
    )
    parser.add_argument(
        "--baseline",
        default="mcp_kit",
        help="implementation the ratios are relative to",
    )
    parser.add_argument("--no-stdio", action="store_true", help="skip the stdio phases")
    parser.add_argument(
        "--no-http", action="store_true", help="skip the Streamable HTTP phases"
    )
    parser.add_argument(
        "--no-setup", action="store_true", help="do not create or repair bench/.venvs"
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="where to write the JSON (default bench/results/<stamp>-<mode>.json)",
    )
    parser.add_argument(
        "--sync-tools",
        action="store_true",
        help="write the tools as plain functions (each framework runs them in worker threads); "
        "default: coroutine functions",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.set_defaults(mode="quick")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table; returns the exit code."""
    args = parse_args(argv)
    os.environ["BENCH_TOOL_STYLE"] = "sync" if args.sync_tools else "async"
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(message)s",
        stream=sys.stderr,
    )
    mode = MODES[args.mode]
    names = [name.strip() for name in args.impl.split(",") if name.strip()]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    log_dir = RESULTS_DIR / "logs" / f"{stamp}-{args.mode}"
    log_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    loops = tuple(loop.strip() for loop in args.loops.split(",") if loop.strip())
    impls = implementations.prepare(names, setup_peers=not args.no_setup, loops=loops)
    for impl in impls:
        logger.info(
            "%-8s %s",
            impl.name,
            "ready" if impl.available else f"UNAVAILABLE: {impl.reason}",
        )
    run = Run(impls, log_dir)
    try:
        run_all(run, mode, do_stdio=not args.no_stdio, do_http=not args.no_http)
    except KeyboardInterrupt:
        logger.error("interrupted; stopping servers")
    finally:
        processes.stop_all()

    order = [impl.name for impl in impls]
    summary = {
        name: {key: summarise(values) for key, values in metrics.items()}
        for name, metrics in run.samples.items()
    }
    metrics = all_metrics(mode.http.concurrencies)
    tables = []  # (loop, implementations in that loop, baseline)
    for loop in loops:
        names_in_loop = [impl.name for impl in impls if impl.loop == loop]
        if not names_in_loop:
            continue
        wanted = implementations.variant_name(implementations.split_name(args.baseline)[0], loop)
        tables.append((loop, names_in_loop, wanted if wanted in names_in_loop else names_in_loop[0]))
    baseline = tables[0][2] if tables else order[0]
    targets_by_loop = {loop: targets.evaluate(summary, base, metrics) for loop, _, base in tables}
    target_rows = targets_by_loop.get(loops[0], []) if loops else []
    elapsed = time.monotonic() - started

    result = {
        "mode": args.mode,
        "started": stamp,
        "elapsed_s": elapsed,
        "machine": machine_info(),
        "config": asdict(mode),
        "baseline": baseline,
        "implementations": {
            impl.name: {
                "label": impl.label,
                "available": impl.available,
                "reason": impl.reason,
                "python": str(impl.python),
                "versions": {
                    dist: implementations.package_version(impl.python, dist)
                    for dist in ("mcp", "fastmcp", "mcp-kit")
                }
                if impl.available
                else {},
            }
            for impl in impls
        },
        "samples": run.samples,
        "details": run.extra,
        "summary": summary,
        "targets": target_rows,
        "targets_by_loop": targets_by_loop,
        "refused": {
            loop: report.refusals(metrics, summary, names_in_loop) for loop, names_in_loop, _ in tables
        },
        "errors": run.errors,
        "phase_seconds": run.phase_seconds,
        "logs": str(log_dir),
    }
    out = args.out or RESULTS_DIR / f"{stamp}-{args.mode}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(without_nan(result), indent=1, default=str))
    chart_out = out.with_suffix(".svg")  # the same run's figures as a chart (bench/chart.py redraws one)
    chart_out.write_text(chart.render_svg(without_nan(result)), encoding="utf-8")

    print(
        f"\nmcp_kit benchmark, {args.mode} mode, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{elapsed:.0f} s"
    )
    print(
        "cells: median (min-max) over repetitions; ratio columns: peer median / baseline median;\n"
        "bytes/reply: JSON-RPC bytes per reply of the timed requests (response ids not counted);\n"
        "a row whose implementations sent different bytes is REFUSED"
    )
    for loop, names_in_loop, base in tables:
        title = LOOP_TITLES.get(loop, loop)
        print(f"\n== event loop: {title} (every server) ==\n")
        labels = {name: implementations.split_name(name)[0] for name in names_in_loop}
        print(report.table(metrics, summary, names_in_loop, base, labels))
        for message in report.refusals(metrics, summary, names_in_loop):
            print(f"  {message}")
        if implementations.split_name(base)[0] == "mcp_kit":
            print(f"\ntargets ({base} vs its peers on {title}, medians of this run):")
            print(report.targets_text(targets_by_loop[loop], base))
    if len(tables) == 2:
        print("\n== the event loop's share: each framework's median on asyncio / on uvloop ==\n")
        print(report.loop_share(metrics, summary, [name for name in tables[0][1]], tables[1][0]))
    for impl in impls:
        if not impl.available:
            print(f"\n{impl.name} was not measured: {impl.reason}")
    if run.errors:
        print(f"\n{len(run.errors)} measurement(s) failed (see {out}):")
        for error in run.errors:
            print(
                f"  {error['impl']} {error['phase']} rep {error['rep']}: {error['error']}"
            )
    print(f"\nraw figures: {out}\nchart: {chart_out}")
    return 1 if run.errors else 0


if __name__ == "__main__":
    sys.exit(main())
