"""Load run: N concurrent sessions spread over three server processes that share one Redis.

Each session is opened on one process, continued on the others (round robin, no stickiness),
holds a GET stream on a third and a subscription to `bench://counter`; during the run every
session calls `echo` in a closed loop (each call on the next process), while a driver triggers
`bump` (from yet another session) every `--interval` seconds. Printed as a benchmark: calls/s, call
latency p50/p99, notification delivery latency p50/p99 (trigger sent -> update read) and lost
notifications (expected updates per session minus those read). Bounded: every wait has a timeout.

    .venv/bin/python bench/scaleout_load.py                    # 200 sessions, 10 s, 3 processes
    .venv/bin/python bench/scaleout_load.py --sessions 50 --seconds 5 --backend memory   # one process, for reference

Starts its own redis-server (from PATH) on a free loopback port and stops it, and the servers, by PID.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from harness import codec
from harness.http_client import HttpConnection, response_for

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "bench" / "servers" / "mcp_kit_server.py"
LISTENING = re.compile(r"serving MCP on http://[\d.]+:(\d+)/mcp")


def start_redis() -> tuple[subprocess.Popen[bytes], int, str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (apt-get install -y redis-server)")
    for _ in range(10):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        workdir = tempfile.mkdtemp(prefix="mcp-kit-load-")
        process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                    "no", "--dir", workdir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return process, port, workdir
            except OSError:
                time.sleep(0.05)
        process.kill()
        process.wait()
    raise SystemExit("redis-server did not start")


def start_server(backend: str | None) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "BENCH_FEATURES": "fanout"}
    if backend:
        env["MCP_BACKEND"] = backend
    process = subprocess.Popen([sys.executable, str(SERVER), "--transport", "http", "--port", "0",
                                "--log-level", "info"], env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        found = LISTENING.search(line)
        if found:
            base = f"http://127.0.0.1:{found.group(1)}"
            for _ in range(100):
                try:
                    httpx.get(f"{base}/healthz", timeout=5).raise_for_status()
                    break
                except httpx.HTTPError:
                    time.sleep(0.05)
            threading.Thread(target=_drain, args=(process.stderr,), daemon=True).start()  # never a full pipe
            return process, base
    process.kill()
    raise SystemExit("a server did not start")


def _drain(pipe: Any) -> None:
    for _ in pipe:
        pass


UPDATED = b"notifications/resources/updated"


class LoadSession:
    """One MCP session with a keep-alive connection to each process (the harness's lean HTTP client)."""

    def __init__(self, ports: list[int], index: int) -> None:
        self.ports = ports
        self.index = index
        self.connections = [HttpConnection(port) for port in ports]
        self.turn = itertools.count(index + 1)
        self.ids = itertools.count(1)
        self.updates: list[float] = []
        self.latencies: list[float] = []
        self._stream: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        for connection in self.connections:
            await connection.open()
        first = self.connections[self.index % len(self.connections)]
        await first.initialize()  # initialize and notifications/initialized on one process ...
        for connection in self.connections:  # ... then every process continues the session
            connection.session_id = first.session_id

    async def rpc(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request_id = next(self.ids)
        connection = self.connections[next(self.turn) % len(self.connections)]
        reply = await connection.post(codec.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                                   "params": params or {}}))
        if reply.status != 200:
            raise RuntimeError(f"{method} on port {connection.port}: HTTP {reply.status} {reply.messages}")
        return response_for(reply, request_id)

    async def hold_stream(self, ready: asyncio.Event) -> None:
        """The session's GET stream on yet another process, counting updates as they arrive."""
        port = self.ports[(self.index + 2) % len(self.ports)]
        reader, self._stream = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        session_id = self.connections[0].session_id
        self._stream.write((f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
                            f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n").encode())
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0] + b" ":
            raise RuntimeError(f"GET stream answered {head[:200]!r}")
        ready.set()
        tail = b""
        while True:
            data = await reader.read(1 << 16)
            if not data:
                return
            window = tail + data
            now = time.perf_counter()
            self.updates.extend([now] * window.count(UPDATED))
            tail = window[-(len(UPDATED) - 1):]

    async def call_loop(self, until: float) -> None:
        while time.perf_counter() < until:
            started = time.perf_counter()
            await self.rpc("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
            self.latencies.append(time.perf_counter() - started)

    async def close(self) -> None:
        if self._stream is not None:
            self._stream.transport.abort()
        for connection in self.connections:
            connection.abort()


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(bases: list[str], sessions: int, seconds: float, interval: float) -> dict[str, Any]:
    ports = [int(base.rsplit(":", 1)[1]) for base in bases]
    clients = [LoadSession(ports, i) for i in range(sessions)]
    driver = LoadSession(ports, 0)
    try:
        for start in range(0, sessions, 50):  # opened in batches: no connection storm
            await asyncio.wait_for(asyncio.gather(*(c.open() for c in clients[start:start + 50])), 120)
        readies = [asyncio.Event() for _ in clients]
        streams = [asyncio.create_task(c.hold_stream(r)) for c, r in zip(clients, readies, strict=True)]
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
        await asyncio.wait_for(asyncio.gather(*(c.rpc("resources/subscribe", {"uri": "bench://counter"})
                                                for c in clients)), 60)
        await asyncio.sleep(1.0)  # every process has seen every subscription (bus refreshes)
        await driver.open()
        triggers: list[float] = []
        until = time.perf_counter() + seconds

        async def trigger() -> None:
            while time.perf_counter() < until - interval:
                triggers.append(time.perf_counter())
                await driver.rpc("tools/call", {"name": "bump", "arguments": {}})
                await asyncio.sleep(interval)

        started = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(trigger(), *(c.call_loop(until) for c in clients)), seconds + 60)
        elapsed = time.perf_counter() - started
        deadline = time.perf_counter() + 10  # let the last updates arrive (bounded)
        while time.perf_counter() < deadline and any(len(c.updates) < len(triggers) for c in clients):
            await asyncio.sleep(0.05)
        for task in streams:
            task.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
    finally:
        for c in [*clients, driver]:
            await c.close()
    calls = sum(len(c.latencies) for c in clients)
    delivery = [got - sent for c in clients for sent, got in zip(triggers, c.updates, strict=False)]
    lost = sum(max(0, len(triggers) - len(c.updates)) for c in clients)
    extra = sum(max(0, len(c.updates) - len(triggers)) for c in clients)
    latencies = [x for c in clients for x in c.latencies]
    return {
        "sessions": sessions,
        "processes": len(bases),
        "seconds": round(elapsed, 2),
        "calls": calls,
        "calls_per_s": round(calls / elapsed, 1),
        "call_p50_ms": round(pct(latencies, 0.5) * 1000, 2),
        "call_p99_ms": round(pct(latencies, 0.99) * 1000, 2),
        "triggers": len(triggers),
        "notifications_expected": len(triggers) * sessions,
        "notifications_lost": lost,
        "notifications_repeated": extra,
        "delivery_p50_ms": round(pct(delivery, 0.5) * 1000, 2),
        "delivery_p99_ms": round(pct(delivery, 0.99) * 1000, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between two bump triggers")
    parser.add_argument("--backend", default="redis", help="redis (start one) or memory (one process only)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    redis: subprocess.Popen[bytes] | None = None
    workdir = None
    servers: list[subprocess.Popen[str]] = []
    try:
        url = None
        count = args.processes
        if args.backend == "redis":
            redis, port, workdir = start_redis()
            url = f"redis://127.0.0.1:{port}/0"
        else:
            count = 1
        bases = []
        for _ in range(count):
            process, base = start_server(url)
            servers.append(process)
            bases.append(base)
        figures = asyncio.run(run(bases, args.sessions, args.seconds, args.interval))
        figures["backend"] = args.backend
        if args.json:
            print(json.dumps(figures))
        else:
            print(f"scale-out load: {figures['sessions']} sessions over {figures['processes']} process(es), "
                  f"backend {args.backend}, {figures['seconds']} s")
            for key in ("calls", "calls_per_s", "call_p50_ms", "call_p99_ms", "triggers", "notifications_expected",
                        "notifications_lost", "notifications_repeated", "delivery_p50_ms", "delivery_p99_ms"):
                print(f"  {key:24} {figures[key]}")
        return 0 if figures["notifications_lost"] == 0 else 1
    finally:
        for process in servers:
            process.send_signal(signal.SIGTERM)
        for process in servers:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if redis is not None:
            redis.terminate()
            redis.wait(10)
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
