"""Server CPU per Streamable HTTP call against the framework-free floor, in short interleaved windows.

    .venv/bin/python bench/http_cpu.py                                  # mcp_kit (this tree) and the floor
    .venv/bin/python bench/http_cpu.py --tree before=/work/main         # + mcp_kit from another checkout
    .venv/bin/python bench/http_cpu.py --clients 16,256 --rounds 9 --window 1.0 --bodies json,sse

Every server runs at once (an idle one costs nothing); for each body type (JSON, SSE) and each
client count, the harness opens one session per client on each server, warms them up, then runs
`--rounds` rounds in which each server in turn (the order rotates) gets one closed-loop window of
`--window` seconds: `echo("hello")` on every connection, one call at a time. Server CPU per call is
utime+stime of the server process (`/proc/PID/stat`) across the window divided by its calls. On a
machine other people share, a burst of their load lands on one window of one server, not on one
server's whole figure: the table shows medians (min-max) and each figure divided by the floor's.
Bytes per reply (JSON-RPC payload, response ids not counted) must be equal, or the row is refused.
The uvloop + httptools loop only (what mcp_kit installs); `--json FILE` writes the samples.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import processes, procstat
from harness.http_client import HttpConnection
from harness.http_suite import ClosedLoop, closed_loop_worker
from harness.implementations import PROJECT_PYTHON, REPO_DIR, SERVERS_DIR

BENCH_DIR = Path(__file__).resolve().parent


def servers(trees: dict[str, Path]) -> dict[str, tuple[list[str], dict[str, str]]]:
    """name -> (argv without the transport flags, environment)."""
    base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    base_env["BENCH_LOOP"] = "uvloop"
    out = {"floor": ([str(PROJECT_PYTHON), str(SERVERS_DIR / "floor_echo.py")], dict(base_env))}
    for name, tree in trees.items():
        argv = [str(PROJECT_PYTHON), str(SERVERS_DIR / "mcp_kit_server.py")]
        out[name] = (argv, {**base_env, "PYTHONPATH": str(tree)})
    return out


async def window(connections: list[HttpConnection], pid: int, seconds: float, first_id: int) -> dict[str, float]:
    for conn in connections:  # uvicorn closes a keep-alive connection idle for 5 s (while the others ran)
        await conn.reopen_if_closed()
    loop = ClosedLoop(time.perf_counter() + seconds, 10_000_000)
    before = procstat.cpu_seconds(pid)

    async def worker(conn: HttpConnection, first: int) -> None:
        while time.perf_counter() < loop.stop_at:
            try:
                await closed_loop_worker(conn, loop, None, first)
            except (ConnectionError, asyncio.IncompleteReadError):  # closed as it went idle: a new one, same session
                await conn.close()
                await conn.open()
            first += 100_000

    await asyncio.gather(*(worker(c, first_id + 1_000_000 * i) for i, c in enumerate(connections)))
    calls = len(loop.latencies)
    return {"cpu_per_call_us": (procstat.cpu_seconds(pid) - before) / calls * 1e6, "calls": calls,
            "calls_per_s": calls / seconds, "payload_bytes": loop.payload_bytes / calls}


async def measure(ports: dict[str, tuple[int, int]], clients: int, rounds: int, seconds: float
                  ) -> dict[str, list[dict[str, float]]]:
    connections: dict[str, list[HttpConnection]] = {}
    for name, (port, _) in ports.items():
        connections[name] = [HttpConnection(port) for _ in range(clients)]
        for conn in connections[name]:
            await conn.open()
            await conn.initialize()
        warm = ClosedLoop(time.perf_counter() + 60, 5 * clients)
        await asyncio.gather(*(closed_loop_worker(c, warm, 5, 900_000_000 + 1_000_000 * i)
                               for i, c in enumerate(connections[name])))
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in ports}
    names = list(ports)
    for number in range(rounds):
        order = names[number % len(names):] + names[:number % len(names)]
        for name in order:
            samples[name].append(await window(connections[name], ports[name][1], seconds, 100_000_000 * (number + 1)))
    for conns in connections.values():
        for conn in conns:
            await conn.close()
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", default=[], help="NAME=DIR: also mcp_kit from DIR")
    parser.add_argument("--clients", default="16,256")
    parser.add_argument("--bodies", default="json,sse")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--window", type=float, default=1.0)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    trees = {"mcp_kit": REPO_DIR}
    for item in args.tree:
        name, _, path = item.partition("=")
        trees[name] = Path(path).resolve()
    table = servers(trees)
    results: dict[str, Any] = {}
    logs = open(os.devnull, "wb")  # noqa: SIM115
    for body in args.bodies.split(","):
        procs = {}
        try:
            ports = {}
            for name, (argv, env) in table.items():
                port = processes.free_port()
                flags = ["--transport", "http", "--host", "127.0.0.1", "--port", str(port)]
                if body == "json":
                    flags.append("--json-response")
                procs[name] = processes.spawn(argv + flags, env, REPO_DIR, logs, pipes=False)
                processes.wait_for_port(port, procs[name], 60)
                ports[name] = (port, procs[name].pid)
            for clients in (int(c) for c in args.clients.split(",")):
                samples = asyncio.run(measure(ports, clients, args.rounds, args.window))
                results[f"{body}_c{clients}"] = samples
                floor = statistics.median(s["cpu_per_call_us"] for s in samples["floor"])
                print(f"{body.upper()} c={clients}: server CPU per call, median (min-max) of {args.rounds} windows")
                for name, rows in samples.items():
                    cpu = [s["cpu_per_call_us"] for s in rows]
                    size = statistics.mean(s["payload_bytes"] for s in rows)
                    print(f"  {name:10s} {statistics.median(cpu):7.1f} us ({min(cpu):.1f}-{max(cpu):.1f})  "
                          f"{statistics.median(cpu) / floor:5.2f}x floor  "
                          f"{statistics.median(s['calls_per_s'] for s in rows):8.0f} calls/s  {size:.0f} B/reply")
                sizes = {round(statistics.mean(s["payload_bytes"] for s in rows), 1) for rows in samples.values()}
                if len(sizes) > 1:
                    print(f"  REFUSED: bytes per reply differ: {sorted(sizes)}")
                sys.stdout.flush()
        finally:
            for proc in procs.values():
                processes.stop(proc)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
