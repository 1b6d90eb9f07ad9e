"""Curves over Streamable HTTP: concurrent clients 1-256, and idle and busy sessions (memory).

clients: one server per body type (SSE, JSON); one session per connection, every connection opened
and warmed up first, then each concurrency level runs a closed loop of `echo` for `duration_s`:
calls/s, p50/p99, server CPU per call, RSS after the level (with all sessions still open).

sessions: three measurements per body type, each on a fresh server.
- idle: one warm session makes one call (RSS0), then sessions are opened (initialize +
  notifications/initialized, no GET stream, no calls) up to each checkpoint: KiB per idle session.
- busy: 64 sessions, 64 connections, a closed loop in which every session makes its calls up to each
  checkpoint (calls per session); RSS growth since the sessions were opened and warmed up, and
  server CPU per call within each segment.
- c=256: 256 sessions each make `wide_calls` calls (closed loop, all at once); RSS before and after.
"""

from __future__ import annotations

import asyncio
import time
from typing import IO, Any

from . import http_suite, processes, procstat
from .curves import Curve, Figure, key, peer_plus, ratio_to_peer
from .http_client import HttpConnection, HttpProtocolError
from .http_suite import ClosedLoop, HttpPlan, closed_loop_worker
from .implementations import REPO_DIR, Implementation

MODES = (("sse", False), ("json", True))


# ------------------------------------------------------------------ clients


def measure_clients(impl: Implementation, settings: dict[str, Any], stderr: IO[bytes]) -> dict[str, float]:
    """One repetition: every concurrency level with SSE replies, then with JSON replies."""
    plan = HttpPlan(
        concurrencies=tuple(settings["concurrencies"]),
        warmup_calls=settings["warmup_calls"],
        duration_s=settings["duration_s"],
        max_calls=10_000_000,
        start_timeout_s=settings["timeout_s"],
    )
    out: dict[str, float] = {}
    for label, json_response in MODES:
        figures = http_suite.run(impl, json_response, plan, stderr)
        for concurrency in plan.concurrencies:
            for name in ("calls_per_s", "p50_ms", "p99_ms", "cpu_per_call_us", "rss_after_mib",
                         "wire_payload_bytes", "client_cpu_per_call_us"):
                out[key(f"{label}_{name}", concurrency)] = figures[f"c{concurrency}_{name}"]
    return out


def _clients_figures() -> list[Figure]:
    figures: list[Figure] = []
    for label in ("sse", "json"):
        title = label.upper()
        wire = f"{label}_wire_payload_bytes"
        figures += [
            Figure(f"{label}_calls_per_s", f"HTTP {title} calls/s", "calls/s", False, wire, log_y=True),
            Figure(f"{label}_cpu_per_call_us", f"HTTP {title} server CPU per call", "us", True, wire, log_y=True),
            Figure(f"{label}_p99_ms", f"HTTP {title} p99", "ms", True, wire, chart=False),
            Figure(f"{label}_rss_after_mib", f"HTTP {title} RSS after the level", "MiB", True),
        ]
    return figures


CLIENTS = Curve(
    name="clients",
    title="Concurrent HTTP clients (Streamable HTTP, one session per client)",
    x_label="concurrent clients",
    xs=lambda settings: list(settings["concurrencies"]),
    figures=_clients_figures(),
    settings={
        "quick": {"concurrencies": (1, 4, 16, 64, 256), "warmup_calls": 2, "duration_s": 0.5, "timeout_s": 60},
        "full": {"concurrencies": (1, 4, 16, 64, 256), "warmup_calls": 10, "duration_s": 3.0, "timeout_s": 120},
    },
    measure=measure_clients,
    command="bench/scaling.py --curve clients",
    transports=("http",),
    targets=[
        ratio_to_peer("sse_calls_per_s", 16, "sdk", 10, higher=True),
        ratio_to_peer("json_calls_per_s", 16, "sdk", 10, higher=True),
        ratio_to_peer("sse_cpu_per_call_us", 16, "floor", 2, higher=False),
        ratio_to_peer("json_cpu_per_call_us", 16, "floor", 2, higher=False),
    ],
    notes=["The floor answers from one bare asyncio protocol: the most this client can measure here."],
)


# ------------------------------------------------------------------ sessions


class _Server:
    """One HTTP server process for the duration of a `with` block."""

    def __init__(self, impl: Implementation, json_response: bool, timeout_s: float, stderr: IO[bytes]) -> None:
        self.port = processes.free_port()
        self.proc = processes.spawn(
            impl.argv("http", self.port, json_response), impl.env(), REPO_DIR, stderr, pipes=False
        )
        self.impl = impl
        self.timeout_s = timeout_s

    def __enter__(self) -> _Server:
        processes.wait_for_port(self.port, self.proc, self.timeout_s)
        procstat.check_native(self.proc.pid, self.impl.expected_native("http"))
        return self

    def __exit__(self, *exc: object) -> None:
        processes.stop(self.proc)

    @property
    def pid(self) -> int:
        return self.proc.pid


async def _bounded(coro: Any, timeout_s: float, what: str) -> Any:
    try:
        return await asyncio.wait_for(coro, timeout_s)
    except TimeoutError as exc:
        raise TimeoutError(f"{what} took longer than {timeout_s:.0f} s") from exc
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        raise HttpProtocolError(f"{what}: connection failed: {exc!r}") from exc


async def _idle(port: int, pid: int, checkpoints: list[int]) -> dict[int, float]:
    """KiB per idle session at each checkpoint (relative to one warm session that made one call)."""
    conn = HttpConnection(port)
    await conn.open()
    try:
        await conn.initialize()
        warm = ClosedLoop(time.perf_counter() + 60, 1)
        await closed_loop_worker(conn, warm, 1, 0)
        rss0 = procstat.rss_mib(pid)
        opened = 0
        out: dict[int, float] = {}
        for checkpoint in checkpoints:
            while opened < checkpoint:
                conn.session_id = None
                await conn.initialize()
                opened += 1
            out[checkpoint] = (procstat.rss_mib(pid) - rss0) * 1024 / checkpoint
        return out
    finally:
        await conn.close()


async def _open_sessions(port: int, count: int) -> list[HttpConnection]:
    connections = [HttpConnection(port) for _ in range(count)]
    for conn in connections:
        await conn.open()
        await conn.initialize()
    return connections


async def _busy(port: int, pid: int, sessions: int, checkpoints: list[int]) -> dict[str, dict[int, float]]:
    """RSS growth and CPU per call as every session reaches each checkpoint (calls per session)."""
    connections = await _open_sessions(port, sessions)
    try:
        warm = ClosedLoop(time.perf_counter() + 60, 2 * sessions)
        await asyncio.gather(*(closed_loop_worker(c, warm, 2, 1_000_000 * i) for i, c in enumerate(connections)))
        rss0 = procstat.rss_mib(pid)
        growth: dict[int, float] = {}
        cpu: dict[int, float] = {}
        done = 0
        for checkpoint in checkpoints:
            for conn in connections:
                await conn.reopen_if_closed()
            segment = ClosedLoop(time.perf_counter() + 3600, sessions * (checkpoint - done))
            cpu_before = procstat.cpu_seconds(pid)
            await asyncio.gather(
                *(
                    closed_loop_worker(c, segment, checkpoint - done, 1_000_000 * i + 10 + done)
                    for i, c in enumerate(connections)
                )
            )
            calls = len(segment.latencies)
            if calls != sessions * (checkpoint - done):
                raise HttpProtocolError(f"busy sessions made {calls} calls, wanted {sessions * (checkpoint - done)}")
            cpu[checkpoint] = (procstat.cpu_seconds(pid) - cpu_before) / calls * 1e6
            growth[checkpoint] = procstat.rss_mib(pid) - rss0
            done = checkpoint
        return {"growth": growth, "cpu": cpu}
    finally:
        for conn in connections:
            await conn.close()


async def _c256(port: int, pid: int, clients: int, calls: int) -> dict[str, float]:
    """RSS after `clients` sessions made `calls` calls each (closed loop, all clients at once)."""
    connections = await _open_sessions(port, clients)
    try:
        warm = ClosedLoop(time.perf_counter() + 60, 2 * clients)
        await asyncio.gather(*(closed_loop_worker(c, warm, 2, 1_000_000 * i) for i, c in enumerate(connections)))
        for conn in connections:
            await conn.reopen_if_closed()
        rss_before = procstat.rss_mib(pid)
        loop = ClosedLoop(time.perf_counter() + 3600, clients * calls)
        await asyncio.gather(
            *(closed_loop_worker(c, loop, calls, 1_000_000 * i + 10) for i, c in enumerate(connections))
        )
        if len(loop.latencies) != clients * calls:
            raise HttpProtocolError(f"the c={clients} run made {len(loop.latencies)} calls, wanted {clients * calls}")
        return {"rss_before": rss_before, "rss_after": procstat.rss_mib(pid)}
    finally:
        for conn in connections:
            await conn.close()


def measure_sessions(impl: Implementation, settings: dict[str, Any], stderr: IO[bytes]) -> dict[str, float]:
    """One repetition: idle sessions (SSE server), then busy sessions and a c=256 run per body type."""
    timeout = settings["timeout_s"]
    out: dict[str, float] = {}
    with _Server(impl, False, timeout, stderr) as server:
        idle = asyncio.run(_bounded(_idle(server.port, server.pid, list(settings["idle"])), timeout, "idle sessions"))
    for checkpoint, kib in idle.items():
        out[key("idle_kib_per_session", checkpoint)] = kib
    for label, json_response in MODES:
        with _Server(impl, json_response, timeout, stderr) as server:
            busy = asyncio.run(
                _bounded(_busy(server.port, server.pid, settings["busy_sessions"], list(settings["busy"])),
                         timeout * 10, "busy sessions")
            )
        for checkpoint in settings["busy"]:
            out[key(f"busy_{label}_growth_mib", checkpoint)] = busy["growth"][checkpoint]
            out[key(f"busy_{label}_cpu_per_call_us", checkpoint)] = busy["cpu"][checkpoint]
        with _Server(impl, json_response, timeout, stderr) as server:
            run = asyncio.run(
                _bounded(_c256(server.port, server.pid, settings["wide_clients"], settings["wide_calls"]),
                         timeout * 10, "c=256 run")
            )
        out[key(f"c256_{label}_rss_mib", "after")] = run["rss_after"]
        out[key(f"c256_{label}_rss_mib", "before")] = run["rss_before"]
    return out


def _sessions_xs(settings: dict[str, Any]) -> list[float | str]:
    return sorted({*settings["idle"], *settings["busy"]}) + ["before", "after"]


SESSIONS = Curve(
    name="sessions",
    title="Idle and busy HTTP sessions (memory)",
    x_label="sessions (idle) / calls per session (busy)",
    xs=_sessions_xs,
    figures=[
        Figure("idle_kib_per_session", "RSS per idle session (SSE server)", "KiB", True, x_label="idle sessions"),
        Figure("busy_json_growth_mib", "RSS growth, 64 busy sessions, JSON replies", "MiB", True,
               x_label="calls per session"),
        Figure("busy_sse_growth_mib", "RSS growth, 64 busy sessions, SSE replies", "MiB", True,
               x_label="calls per session"),
        Figure("busy_json_cpu_per_call_us", "server CPU per call, 64 busy sessions, JSON", "us", True, chart=False),
        Figure("busy_sse_cpu_per_call_us", "server CPU per call, 64 busy sessions, SSE", "us", True, chart=False),
        Figure("c256_json_rss_mib", "RSS before/after a c=256 run, JSON replies", "MiB", True, chart=False),
        Figure("c256_sse_rss_mib", "RSS before/after a c=256 run, SSE replies", "MiB", True, chart=False),
    ],
    settings={
        "quick": {"idle": (100, 500), "busy_sessions": 64, "busy": (100, 250), "wide_clients": 256,
                  "wide_calls": 10, "timeout_s": 120},
        "full": {"idle": (100, 250, 500, 900), "busy_sessions": 64, "busy": (250, 500, 1000, 2000),
                 "wide_clients": 256, "wide_calls": 50, "timeout_s": 300},
    },
    measure=measure_sessions,
    command="bench/scaling.py --curve sessions",
    transports=("http",),
    targets=[
        peer_plus("busy_json_growth_mib", None, "sdk", 10, "MiB"),
        peer_plus("busy_sse_growth_mib", None, "sdk", 10, "MiB"),
        ratio_to_peer("c256_json_rss_mib", "after", "sdk", 0.7, higher=False),
        ratio_to_peer("c256_sse_rss_mib", "after", "sdk", 0.7, higher=False),
    ],
    log_x=False,
    notes=[
        "The busy-session target is for 2,000 calls per session (--full); a quick run stops at 250 and "
        "judges the target there (mcp_kit's event store fills up at 1,000 events per session).",
        "The c=256 run is equal work: every one of 256 sessions makes wide_calls calls, all sessions at once.",
    ],
)
