"""What a plain (`def`) tool costs per sequential call, against the same tool written `async def`.

    PYTHONPATH=. .venv/bin/python bench/sync_cost.py [--calls 3000] [--rounds 7] [--no-sdk] [--no-options]

Two parts, both measured as CPU time (the machine is shared: wall-clock figures would measure the
neighbours):

- **stdio, end to end.** The benchmark servers (`servers/*_server.py`) with `async def` tools and with
  plain `def` tools (`BENCH_TOOL_STYLE=sync`), mcp_kit and the official SDK, all started at once; then
  `--rounds` rounds (`--before DIR` adds the sync server of another checkout, e.g. a `git worktree add`
  of the commit before, run with `PYTHONPATH=DIR`), each sending `--calls` sequential `echo` calls to
  every server in turn (the order rotates): server CPU per call (utime+stime of the process, all
  threads, from `/proc/PID/stat`). Medians over rounds, min-max beside them.
- **the options, in process** (`--no-options` skips): one sequential call of a trivial function from a
  coroutine, each way it could be run: called directly on the loop; handed to a worker thread
  (`run_in_executor`, what mcp_kit did for every sync call); the same with the loop and the worker pinned
  to one CPU (Linux affinity); a worker that spins for a while before it parks, waiting for the next
  call; and `ToolThreads` as it is now (inline once the function has proved short). Process CPU per
  call (`time.process_time`, all threads), interleaved rounds, median.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from harness import procstat  # noqa: E402
from harness.stdio_client import StdioPeer, call_request_bytes  # noqa: E402

# ---------------------------------------------------------------------------------------------- stdio


def start(script: str, style: str, checkout: Path = BENCH.parent) -> StdioPeer:
    env = dict(os.environ, BENCH_TOOL_STYLE=style, BENCH_LOOP="uvloop", PYTHONPATH=str(checkout))
    peer = StdioPeer([sys.executable, str(BENCH / "servers" / script), "--transport", "stdio"], env, BENCH.parent,
                     sys.stderr.buffer)
    peer.initialize()
    return peer


def sequential(peer: StdioPeer, calls: int) -> float:
    """Server CPU (µs) per call over `calls` sequential `echo` calls."""
    before = procstat.cpu_seconds(peer.pid)
    for _ in range(calls):
        request_id = peer.next_id()
        peer.write(call_request_bytes(request_id, "echo", {"text": "hello"}))
        while True:
            responses = peer.read_responses()
            if responses:
                break
        result = responses[0].get("result")
        if responses[0].get("id") != request_id or not result or result.get("isError"):
            raise RuntimeError(f"bad reply: {responses[0]!r}")
    return (procstat.cpu_seconds(peer.pid) - before) / calls * 1e6


def stdio_part(calls: int, rounds: int, sdk: bool, before: Path | None) -> dict[str, list[float]]:
    servers = {"mcp_kit async": ("mcp_kit_server.py", "async", BENCH.parent),
               "mcp_kit sync": ("mcp_kit_server.py", "sync", BENCH.parent)}
    if before is not None:
        servers["mcp_kit sync, --before checkout"] = ("mcp_kit_server.py", "sync", before)
    if sdk:
        servers |= {"sdk async": ("sdk_server.py", "async", BENCH.parent),
                    "sdk sync": ("sdk_server.py", "sync", BENCH.parent)}
    peers = {name: start(script, style, checkout) for name, (script, style, checkout) in servers.items()}
    samples: dict[str, list[float]] = {name: [] for name in peers}
    try:
        for peer in peers.values():
            sequential(peer, 300)  # warm up
        names = list(peers)
        for index in range(rounds):
            for name in names[index % len(names):] + names[:index % len(names)]:
                samples[name].append(sequential(peers[name], calls))
            print(f"  round {index + 1}/{rounds}", file=sys.stderr)
    finally:
        for peer in peers.values():
            peer.stop()
    return samples


# -------------------------------------------------------------------------------------------- options


def tool(text: str) -> str:
    return text


class SpinningWorker:
    """One worker thread that, after a call, polls for the next one for `spin_s` before it parks."""

    def __init__(self, spin_s: float) -> None:
        self.spin_s = spin_s
        self.jobs: collections.deque[tuple[Callable[[], Any], asyncio.Future[Any]]] = collections.deque()
        self.wake = threading.Event()
        self.thread = threading.Thread(target=self._work, daemon=True)
        self.thread.start()

    def _work(self) -> None:
        while True:
            deadline = time.perf_counter() + self.spin_s
            while not self.jobs and time.perf_counter() < deadline:
                time.sleep(0)  # lets the loop's thread have the GIL
            if not self.jobs:
                self.wake.wait()
                self.wake.clear()
                continue
            fn, future = self.jobs.popleft()
            value = fn()
            future.get_loop().call_soon_threadsafe(future.set_result, value)

    def run(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        future = asyncio.get_running_loop().create_future()
        self.jobs.append((fn, future))
        self.wake.set()
        return future


async def options_part(calls: int, rounds: int) -> dict[str, list[float]]:
    from mcp_kit._execution.threads import ToolThreads

    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(1)
    pinned = ThreadPoolExecutor(1)
    spinner = SpinningWorker(0.0002)
    threads = ToolThreads(4)
    kwargs = {"text": "hello"}

    async def direct() -> Any:
        return tool(**kwargs)

    async def hop() -> Any:
        return await loop.run_in_executor(pool, lambda: tool(**kwargs))

    async def hop_pinned() -> Any:
        return await loop.run_in_executor(pinned, lambda: tool(**kwargs))

    async def spin() -> Any:
        return await spinner.run(lambda: tool(**kwargs))

    async def tool_threads() -> Any:
        return await threads.run(tool, kwargs)

    ways: dict[str, Callable[[], Awaitable[Any]]] = {"direct call": direct, "worker thread": hop}
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        saved = os.sched_getaffinity(0)
        os.sched_setaffinity(threading.get_native_id(), saved)  # the loop's thread keeps every CPU by default
        pinned.submit(lambda: os.sched_setaffinity(threading.get_native_id(), {cpu})).result()
        ways["worker thread, one CPU"] = hop_pinned
    ways["spin 200 us before parking"] = spin
    ways["ToolThreads (inline when proven)"] = tool_threads
    samples: dict[str, list[float]] = {name: [] for name in ways}
    for way in ways.values():
        for _ in range(200):
            await way()
    names = list(ways)
    for index in range(rounds):
        for name in names[index % len(names):] + names[:index % len(names)]:
            way = ways[name]
            if name == "worker thread, one CPU":
                os.sched_setaffinity(threading.get_native_id(), {cpu})
            started = time.process_time()
            for _ in range(calls):
                await way()
            samples[name].append((time.process_time() - started) / calls * 1e6)
            if name == "worker thread, one CPU":
                os.sched_setaffinity(threading.get_native_id(), saved)
    record = threads._records.get(tool)
    print(f"  ToolThreads: inline now {record.inline if record else None}, "
          f"demotions {record.demotions if record else None}", file=sys.stderr)
    pool.shutdown()
    pinned.shutdown()
    threads.shutdown()
    return samples


def report(title: str, samples: dict[str, list[float]], base: str) -> None:
    print(f"\n{title}")
    reference = statistics.median(samples[base])
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"  {name:34} {median:8.1f} us  ({min(values):.1f}-{max(values):.1f})  {median / reference:5.2f}x {base}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-sdk", action="store_true")
    parser.add_argument("--no-stdio", action="store_true")
    parser.add_argument("--no-options", action="store_true")
    parser.add_argument("--before", type=Path,
                        help="another checkout of mcp_kit (its sync server runs too, with PYTHONPATH=DIR)")
    args = parser.parse_args()
    if not args.no_options:
        report("in process: CPU per sequential call (all threads)",
               asyncio.run(options_part(args.calls * 3, args.rounds)), "direct call")
    if not args.no_stdio:
        samples = stdio_part(args.calls, args.rounds, not args.no_sdk, args.before)
        report("stdio: server CPU per sequential echo call", samples, "mcp_kit async")


if __name__ == "__main__":
    main()
