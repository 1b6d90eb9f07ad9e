"""Subscription fan-out in both styles, in one process or across processes sharing a Redis.

    .venv/bin/python bench/fanout.py                                   # mcp_kit and the floor, one process
    .venv/bin/python bench/fanout.py --backend redis --processes 2     # two mcp_kit processes on one Redis
    .venv/bin/python bench/fanout.py --tree before=/work/main          # + mcp_kit from another checkout

The measurement is the fan-out curve's (`harness/curve_fanout.py`): N subscribers to `bench://counter`,
either sessions with a GET /mcp stream that sent `resources/subscribe` (2025-11-25) or
`subscriptions/listen` streams (2026-07-28); one warm-up trigger (`tools/call bump`), then
`--triggers` measured ones: the triggering call's round trip and the time from sending it until the
last subscriber has read its `notifications/resources/updated` (medians). With `--processes 2` the
subscribers' streams alternate between the two processes and every trigger goes to the first, so
half the notifications cross Redis (the bus) before they are written. The client reads every stream
on the same CPUs as the servers: the floor (one process only) shows that share.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import curve_fanout, processes
from harness.implementations import PROJECT_PYTHON, REPO_DIR, SERVERS_DIR


class SplitEra(curve_fanout.Era):
    """The curve's era, with subscribers' streams spread over several ports (processes)."""

    def __init__(self, name: str, ports: list[int]) -> None:
        super().__init__(name, ports[0])
        self.ports = ports
        self.count = 0

    async def subscribe(self, rounds: curve_fanout.Round) -> curve_fanout.Stream:
        self.port = self.ports[self.count % len(self.ports)]  # the stream's; the control connection keeps its own
        self.count += 1
        try:
            return await super().subscribe(rounds)
        finally:
            self.port = self.ports[0]


async def fan_out(ports: list[int], era_name: str, subscribers: list[int],
                  triggers: int) -> dict[int, dict[str, float]]:
    era = SplitEra(era_name, ports)
    await era.start()
    rounds = curve_fanout.Round(0)
    streams: list[curve_fanout.Stream] = []
    out: dict[int, dict[str, float]] = {}
    try:
        for target in subscribers:
            while len(streams) < target:
                streams.append(await era.subscribe(rounds))
            calls, spreads = [], []
            for number in range(1 + triggers):
                rounds.next(len(streams))
                started = time.perf_counter()
                call_ms = await era.trigger()
                await asyncio.wait_for(rounds.done.wait(), 60)
                if number:
                    calls.append(call_ms)
                    spreads.append((rounds.all_at - started) * 1000)
            out[target] = {"call_ms": statistics.median(calls), "all_ms": statistics.median(spreads),
                           "call_max_ms": max(calls), "all_max_ms": max(spreads)}
        return out
    finally:
        for stream in streams:
            stream.close()
        await era.control.close()


def start_redis() -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed")
    port = processes.free_port()
    proc = processes.spawn([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                           dict(os.environ), REPO_DIR, open(os.devnull, "wb"), pipes=False)  # noqa: SIM115
    processes.wait_for_port(port, proc, 20)
    return proc, f"redis://127.0.0.1:{port}/0"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subscribers", default="1,10,100,1000")
    parser.add_argument("--triggers", type=int, default=5)
    parser.add_argument("--backend", choices=["memory", "redis"], default="memory")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--tree", action="append", default=[], help="NAME=DIR: also mcp_kit from DIR")
    parser.add_argument("--no-floor", action="store_true")
    parser.add_argument("--no-self", action="store_true", help="only the --tree checkouts")
    parser.add_argument("--eras", default="handshake,modern")
    args = parser.parse_args()
    subscribers = [int(n) for n in args.subscribers.split(",")]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(BENCH_LOOP="uvloop", BENCH_FEATURES="fanout")
    impls: dict[str, tuple[list[str], dict[str, str], int]] = {}
    trees = {} if args.no_self else {"mcp_kit": REPO_DIR}
    trees |= {t.split("=", 1)[0]: Path(t.split("=", 1)[1]) for t in args.tree}
    for name, tree in trees.items():
        impls[name] = ([str(PROJECT_PYTHON), str(SERVERS_DIR / "mcp_kit_server.py")],
                       {**env, "PYTHONPATH": str(tree.resolve())}, args.processes)
    if not args.no_floor and args.backend == "memory" and args.processes == 1:
        impls["floor"] = ([str(PROJECT_PYTHON), str(SERVERS_DIR / "floor_echo.py")], env, 1)
    redis = None
    logs = open(os.devnull, "wb")  # noqa: SIM115
    try:
        if args.backend == "redis":
            redis, url = start_redis()
        for era in args.eras.split(","):
            print(f"{era} ({'resources/subscribe sessions' if era == 'handshake' else 'subscriptions/listen'}), "
                  f"backend {args.backend}, {args.processes} process(es), medians of {args.triggers} triggers")
            for name, (argv, base_env, count) in impls.items():
                procs, ports = [], []
                try:
                    for _ in range(count):
                        port = processes.free_port()
                        server_env = dict(base_env)
                        if redis is not None and name != "floor":
                            server_env["MCP_BACKEND"] = url
                        procs.append(processes.spawn(argv + ["--transport", "http", "--host", "127.0.0.1", "--port",
                                                             str(port)], server_env, REPO_DIR, logs, pipes=False))
                        processes.wait_for_port(port, procs[-1], 60)
                        ports.append(port)
                    figures = asyncio.run(fan_out(ports, era, subscribers, args.triggers))
                finally:
                    for proc in procs:
                        processes.stop(proc)
                base = figures[subscribers[0]]["call_ms"]
                for n, row in figures.items():
                    print(f"  {name:10s} N={n:5d}  trigger {row['call_ms']:7.2f} ms ({row['call_ms'] / base:4.1f}x N=1)"
                          f"  all notified {row['all_ms']:7.2f} ms  (max {row['call_max_ms']:.2f} / "
                          f"{row['all_max_ms']:.2f})")
                sys.stdout.flush()
    finally:
        if redis is not None:
            processes.stop(redis)
    return 0


if __name__ == "__main__":
    sys.exit(main())
