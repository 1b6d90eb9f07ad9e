"""Measurements over Streamable HTTP: closed-loop calls/s and latency at several concurrencies, server CPU per call."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import IO, Any

from . import processes, procstat
from .http_client import HttpConnection, HttpProtocolError, response_for
from .implementations import REPO_DIR, Implementation
from .stats import percentile

ECHO_TEXT = "hello"


@dataclass(frozen=True)
class HttpPlan:
    """How much work each HTTP server run does."""

    concurrencies: tuple[int, ...]
    warmup_calls: int
    duration_s: float
    max_calls: int
    start_timeout_s: float


def _echo_body(request_id: int) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}'
        % request_id
    )


class ClosedLoop:
    """Shared state of one closed-loop phase."""

    def __init__(self, stop_at: float, max_calls: int) -> None:
        self.stop_at = stop_at
        self.remaining = max_calls
        self.latencies: list[float] = []
        self.content_types: set[str] = set()
        self.payload_bytes = 0  # JSON-RPC response bytes, response ids not counted
        self.wire_bytes = 0  # whole HTTP responses: status line, headers, body framing


async def closed_loop_worker(
    conn: HttpConnection, loop: ClosedLoop, calls: int | None, first_id: int
) -> None:
    """Closed loop: one call at a time on `conn` until the phase ends (or `calls` are done)."""
    request_id = first_id
    clock = time.perf_counter
    done = 0
    while (
        (calls is None or done < calls)
        and loop.remaining > 0
        and clock() < loop.stop_at
    ):
        loop.remaining -= 1
        request_id += 1
        started = clock()
        reply = await conn.post(_echo_body(request_id))
        elapsed = clock() - started
        message = response_for(reply, request_id)
        if message["result"].get("isError"):
            raise HttpProtocolError(f"echo returned an error: {message['result']}")
        loop.latencies.append(elapsed)
        loop.content_types.add(reply.content_type)
        loop.payload_bytes += reply.payload_bytes - len(b"%d" % request_id)
        loop.wire_bytes += reply.wire_bytes
        done += 1


async def _level(
    connections: list[HttpConnection], pid: int, plan: HttpPlan, first_id: int
) -> dict[str, Any]:
    """Measure a closed loop of echo calls over `connections` (one session each) for `plan.duration_s`."""
    measured = ClosedLoop(time.perf_counter() + plan.duration_s, plan.max_calls)
    cpu_before = procstat.cpu_seconds(pid)
    client_before = time.process_time()
    started = time.perf_counter()
    await asyncio.gather(
        *(
            closed_loop_worker(c, measured, None, first_id + 1_000_000 * i)
            for i, c in enumerate(connections)
        )
    )
    elapsed = time.perf_counter() - started
    calls = len(measured.latencies)
    server_cpu = procstat.cpu_seconds(pid) - cpu_before
    client_cpu = time.process_time() - client_before
    return {
        "calls_per_s": calls / elapsed,
        "p50_ms": percentile(measured.latencies, 0.5) * 1000,
        "p99_ms": percentile(measured.latencies, 0.99) * 1000,
        "cpu_per_call_us": server_cpu / calls * 1e6,
        "client_cpu_per_call_us": client_cpu / calls * 1e6,
        "calls": calls,
        "content_types": sorted(measured.content_types),
        "wire_payload_bytes": measured.payload_bytes / calls,
        "wire_http_bytes": measured.wire_bytes / calls,
        "rss_after_mib": procstat.rss_mib(pid),
    }


async def _all_levels(port: int, pid: int, plan: HttpPlan) -> dict[int, dict[str, Any]]:
    """Open one session per connection for the highest concurrency, warm them all up, then measure each level."""
    connections = [HttpConnection(port) for _ in range(max(plan.concurrencies))]
    budget = plan.start_timeout_s + len(plan.concurrencies) * (plan.duration_s + 30)
    watchdog = asyncio.get_running_loop().call_later(
        budget, lambda: [conn.abort() for conn in connections]
    )
    try:
        for conn in connections:
            await conn.open()
            await conn.initialize()
        warm = ClosedLoop(
            time.perf_counter() + plan.start_timeout_s,
            plan.warmup_calls * len(connections),
        )
        await asyncio.gather(
            *(
                closed_loop_worker(c, warm, plan.warmup_calls, 100_000_000 + 1_000_000 * i)
                for i, c in enumerate(connections)
            )
        )
        levels = {}
        for number, concurrency in enumerate(plan.concurrencies):
            for conn in connections[:concurrency]:
                await conn.reopen_if_closed()
            levels[concurrency] = await _level(
                connections[:concurrency], pid, plan, 200_000_000 * (number + 1)
            )
        for conn in connections:
            await conn.reopen_if_closed()
            await conn.delete_session()
        return levels
    except asyncio.CancelledError:
        raise
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        raise HttpProtocolError(f"connection failed or timed out: {exc!r}") from exc
    finally:
        watchdog.cancel()
        for conn in connections:
            await conn.close()


def run(
    impl: Implementation, json_response: bool, plan: HttpPlan, stderr: IO[bytes]
) -> dict[str, Any]:
    """Start `impl` on Streamable HTTP (SSE or JSON responses), measure every concurrency level, stop it."""
    port = processes.free_port()
    proc = processes.spawn(
        impl.argv("http", port, json_response),
        impl.env(),
        REPO_DIR,
        stderr,
        pipes=False,
    )
    try:
        processes.wait_for_port(port, proc, plan.start_timeout_s)
        procstat.check_native(proc.pid, impl.expected_native("http"))
        rss_idle = procstat.rss_mib(proc.pid)
        levels = asyncio.run(_all_levels(port, proc.pid, plan))
        expected = "application/json" if json_response else "text/event-stream"
        seen = sorted(
            {ct for level in levels.values() for ct in level["content_types"]}
        )
        if seen != [expected]:
            raise HttpProtocolError(f"asked for {expected} responses but got {seen}")
        out: dict[str, Any] = {
            "rss_idle_mib": rss_idle,
            "peak_rss_mib": procstat.peak_rss_mib(proc.pid),
        }
        for concurrency, figures in levels.items():
            for key in (
                "calls_per_s",
                "p50_ms",
                "p99_ms",
                "cpu_per_call_us",
                "client_cpu_per_call_us",
                "wire_payload_bytes",
                "wire_http_bytes",
                "rss_after_mib",
            ):
                out[f"c{concurrency}_{key}"] = figures[key]
        return out
    finally:
        processes.stop(proc)
