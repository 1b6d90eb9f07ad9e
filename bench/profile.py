"""Profile one benchmark server under load: cProfile (default) or py-spy, stdio pipelined or HTTP closed loop.

    .venv/bin/python bench/profile.py --impl mcp_kit                          # stdio, 64 in flight, cProfile top 25
    .venv/bin/python bench/profile.py --impl mcp_kit --transport http --json-response
    .venv/bin/python bench/profile.py --impl mcp_kit --profiler py-spy         # needs `pip install py-spy`

The server runs under `python -m cProfile -o FILE` (or has `py-spy record --pid` attached) and is
driven by the same client code as bench/run.py; it is stopped by closing stdin (stdio) or SIGINT
(HTTP), so cProfile can write its output. cProfile counts every coroutine resumption as a call and
inflates cheap calls; py-spy's sampling is the fairer picture of where time goes. Files land in bench/results/profiles/.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import io
import logging
import os
import pstats
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import http_suite, implementations, processes
from harness.implementations import REPO_DIR, Implementation
from harness.stdio_client import StdioPeer
from harness.stdio_suite import ECHO_TEXT, call_line_parts, pipelined

logger = logging.getLogger("bench.profile")
PROFILE_DIR = implementations.BENCH_DIR / "results" / "profiles"


def profiled_argv(argv: list[str], profiler: str, out: Path) -> list[str]:
    """Wrap the server command line in cProfile (py-spy attaches to the PID instead: it prints to stdout)."""
    if profiler == "cprofile":
        return [argv[0], "-m", "cProfile", "-o", str(out)] + argv[1:]
    return argv


class PySpy:
    """`py-spy record --pid` running beside the server; stopped with SIGINT so it writes its output."""

    def __init__(self, out: Path, log: io.BufferedWriter) -> None:
        self.out = out
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def attach(self, pid: int) -> None:
        """Start sampling `pid`."""
        py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        argv = [
            py_spy,
            "record",
            "--pid",
            str(pid),
            "--rate",
            "250",
            "--gil",
            "--nonblocking",
            "--format",
            "raw",
            "--output",
            str(self.out),
        ]
        self.proc = processes.spawn(
            argv, dict(os.environ), REPO_DIR, self.log, pipes=False
        )
        time.sleep(1.0)  # let it attach before the load starts

    def detach(self) -> None:
        """Stop sampling and wait for the output file."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            finally:
                processes.stop(self.proc)


def drive_stdio(
    impl: Implementation,
    argv: list[str],
    calls: int,
    stderr: io.BufferedWriter,
    spy: PySpy | None,
) -> float:
    """Pipelined echo calls (64 in flight); returns calls/s. Stops the server by closing stdin."""
    peer = StdioPeer(argv, impl.env(), REPO_DIR, stderr)
    try:
        peer.initialize(120)
        if spy is not None:
            spy.attach(peer.pid)
        head, tail = call_line_parts("echo", {"text": ECHO_TEXT})
        elapsed = pipelined(peer, head, tail, calls, 64, time.monotonic() + 600)
        if spy is not None:
            spy.detach()
        assert peer.proc.stdin is not None
        peer.proc.stdin.close()  # EOF: the server exits normally and the profiler writes its file
        peer.proc.wait(timeout=60)
        return calls / elapsed
    finally:
        peer.stop()


def drive_http(
    impl: Implementation,
    argv: list[str],
    seconds: float,
    stderr: io.BufferedWriter,
    spy: PySpy | None,
) -> float:
    """Closed loop at concurrency 16 for `seconds`; returns calls/s. Stops the server with SIGINT."""
    port = int(argv[argv.index("--port") + 1])
    proc = processes.spawn(argv, impl.env(), REPO_DIR, stderr, pipes=False)
    try:
        processes.wait_for_port(port, proc, 60)
        if spy is not None:
            spy.attach(proc.pid)
        plan = http_suite.HttpPlan((16,), 5, seconds, 10_000_000, 60)
        figures = asyncio.run(http_suite._all_levels(port, proc.pid, plan))[16]
        if spy is not None:
            spy.detach()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        return float(figures["calls_per_s"])
    finally:
        processes.stop(proc)


def top_cprofile(path: Path, limit: int) -> str:
    """The `limit` most expensive functions by own time, then by cumulative time."""
    buffer = io.StringIO()
    stats = pstats.Stats(str(path), stream=buffer)
    stats.strip_dirs().sort_stats("tottime").print_stats(limit)
    stats.sort_stats("cumulative").print_stats(limit)
    return buffer.getvalue()


def top_pyspy(path: Path, limit: int) -> str:
    """Leaf frames and frames-anywhere-on-stack ranked by sample share, from py-spy's raw (collapsed) output."""
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = stack.split(";")
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    lines = [f"{total} samples", "", "own (leaf) share:"]
    lines += [
        f"  {100 * n / total:5.1f}%  {frame}" for frame, n in own.most_common(limit)
    ]
    lines += ["", "inclusive share:"]
    lines += [
        f"  {100 * n / total:5.1f}%  {frame}"
        for frame, n in inclusive.most_common(limit)
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Profile one implementation and print the hot spots."""
    parser = argparse.ArgumentParser(
        prog="bench/profile.py", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--impl", default="mcp_kit", choices=["mcp_kit", "sdk", "fastmcp", "floor"]
    )
    parser.add_argument("--transport", default="stdio", choices=["stdio", "http"])
    parser.add_argument(
        "--json-response", action="store_true", help="HTTP: JSON bodies instead of SSE"
    )
    parser.add_argument(
        "--profiler", default="cprofile", choices=["cprofile", "py-spy"]
    )
    parser.add_argument(
        "--calls", type=int, default=20000, help="stdio: pipelined calls"
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=5.0,
        help="HTTP: seconds of load at concurrency 16",
    )
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)

    impl = implementations.prepare([args.impl], setup_peers=True)[0]
    if not impl.available:
        logger.error("%s unavailable: %s", impl.name, impl.reason)
        return 2
    PROFILE_DIR.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    suffix = "prof" if args.profiler == "cprofile" else "txt"
    out = PROFILE_DIR / f"{stamp}-{impl.name}-{args.transport}-{args.profiler}.{suffix}"
    log = PROFILE_DIR / f"{stamp}-{impl.name}-{args.transport}.log"
    try:
        with open(log, "wb") as stderr:
            spy = PySpy(out, stderr) if args.profiler == "py-spy" else None
            if args.transport == "stdio":
                argv_ = profiled_argv(impl.argv("stdio"), args.profiler, out)
                rate = drive_stdio(impl, argv_, args.calls, stderr, spy)
            else:
                argv_ = profiled_argv(
                    impl.argv("http", processes.free_port(), args.json_response),
                    args.profiler,
                    out,
                )
                rate = drive_http(impl, argv_, args.seconds, stderr, spy)
    finally:
        processes.stop_all()
    if not out.exists():
        logger.error("the profiler wrote nothing; server log: %s", log)
        return 1
    print(
        f"{impl.name} {args.transport} under {args.profiler}: {rate:,.0f} calls/s (profiler overhead included)"
    )
    print(
        top_cprofile(out, args.top)
        if args.profiler == "cprofile"
        else top_pyspy(out, args.top)
    )
    print(f"profile: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
