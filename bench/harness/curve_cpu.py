"""Curve: CPU-bound sync tools (stdio). `ping` latency while N calls of a 5 ms busy `def` tool are in flight.

The server registers `busy(ms)` (`BENCH_FEATURES=busy`): a plain function that burns `ms` of its
thread's CPU time; every framework runs it in a worker thread. Per repetition, one stdio session:
`idle_pings` sequential pings (the idle p50), then for each N: N `busy(5)` calls written at once,
then one `ping` at a time (the next as soon as the previous is answered) while any busy call is
unanswered. Figures: p50 / p99 / max of those pings' round trips, how many were sent, the burst's
length (first busy call written -> last answered), and the server's CPU time per busy call.
"""

from __future__ import annotations

import time
from typing import IO, Any

from . import procstat
from .curves import Curve, Figure, at_most, key
from .implementations import REPO_DIR, Implementation
from .stats import percentile
from .stdio_client import ServerError, StdioPeer
from .stdio_suite import call_line_parts

PING = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n'


def _burst(peer: StdioPeer, calls: int, busy_ms: int, timeout_s: float) -> dict[str, float]:
    head, tail = call_line_parts("busy", {"ms": busy_ms})
    busy_ids = set()
    lines = []
    for _ in range(calls):
        request_id = peer.next_id()
        busy_ids.add(request_id)
        lines.append(head + str(request_id).encode() + tail)
    cpu_before = procstat.cpu_seconds(peer.pid)
    started = time.perf_counter()
    deadline = time.monotonic() + timeout_s
    peer.write(b"".join(lines), timeout_s)
    pings: list[float] = []
    errors = 0
    while busy_ids:
        ping_id = peer.next_id()
        sent = time.perf_counter()
        peer.write(PING % ping_id)
        answered = False
        while not answered:
            if time.monotonic() > deadline:
                raise TimeoutError(f"burst of {calls} not answered within {timeout_s:.0f} s ({len(busy_ids)} left)")
            for response in peer.read_responses(max(0.1, deadline - time.monotonic())):
                if response.get("id") == ping_id:  # sent while busy calls were outstanding: it counts
                    answered = True
                    pings.append((time.perf_counter() - sent) * 1000)
                elif response.get("id") in busy_ids:
                    busy_ids.discard(response["id"])
                    result = response.get("result") or {}
                    if "error" in response or result.get("isError"):
                        errors += 1
                else:
                    raise ServerError(f"unexpected response {str(response)[:200]}")
    elapsed = time.perf_counter() - started
    if errors:
        raise ServerError(f"{errors} of {calls} busy calls failed")
    return {
        "ping_p50_ms": percentile(pings, 0.5),
        "ping_p99_ms": percentile(pings, 0.99),
        "ping_max_ms": max(pings),
        "pings": float(len(pings)),
        "burst_s": elapsed,
        "cpu_per_busy_call_ms": (procstat.cpu_seconds(peer.pid) - cpu_before) / calls * 1000,
    }


def measure(impl: Implementation, settings: dict[str, Any], stderr: IO[bytes]) -> dict[str, float]:
    """One repetition: idle pings, then each burst size in one session."""
    peer = StdioPeer(impl.argv("stdio"), impl.env(BENCH_FEATURES="busy"), REPO_DIR, stderr)
    try:
        peer.initialize(settings["timeout_s"])
        procstat.check_native(peer.pid, impl.expected_native("stdio"))
        peer.request("tools/call", {"name": "busy", "arguments": {"ms": 1}}, settings["timeout_s"])
        idle: list[float] = []
        for _ in range(settings["idle_pings"]):
            started = time.perf_counter()
            peer.request("ping", None, settings["timeout_s"])
            idle.append((time.perf_counter() - started) * 1000)
        out = {key("ping_p50_ms", 0): percentile(idle, 0.5), key("ping_p99_ms", 0): percentile(idle, 0.99),
               key("ping_max_ms", 0): max(idle)}
        for calls in settings["bursts"]:
            for name, value in _burst(peer, calls, settings["busy_ms"], settings["timeout_s"]).items():
                out[key(name, calls)] = value
        return out
    finally:
        peer.stop()


CURVE = Curve(
    name="cpu",
    title="CPU-bound sync tools: ping while busy(5 ms) calls are in flight (stdio)",
    x_label="busy calls sent at once",
    xs=lambda settings: [0, *settings["bursts"]],
    figures=[
        Figure("ping_p50_ms", "ping p50 during the burst", "ms", True, log_y=True),
        Figure("ping_p99_ms", "ping p99 during the burst", "ms", True, log_y=True),
        Figure("ping_max_ms", "ping max during the burst", "ms", True, log_y=True),
        Figure("pings", "pings sent during the burst", "pings", False, chart=False),
        Figure("burst_s", "burst: first busy call sent -> last answered", "s", True),
        Figure("cpu_per_busy_call_ms", "server CPU per busy call (5 ms of work)", "ms", True, chart=False),
    ],
    settings={
        "quick": {"bursts": (10, 50, 200), "busy_ms": 5, "idle_pings": 50, "timeout_s": 120},
        "full": {"bursts": (10, 50, 100, 200), "busy_ms": 5, "idle_pings": 200, "timeout_s": 300},
    },
    measure=measure,
    command="bench/scaling.py --curve cpu",
    unsupported={"floor": "no concurrency"},
    log_x=False,
    targets=[at_most("ping_p99_ms", 200, 50, "ms")],
    notes=[
        "x = 0 is the idle session (pings with nothing in flight).",
        "The floor is one thread answering one line at a time: a busy call would block every ping.",
    ],
)
