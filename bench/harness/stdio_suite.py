"""Measurements over the stdio transport: cold start, latency, pipelined throughput, CPU, memory, big payloads."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import IO, Any

from . import codec, procstat
from .implementations import REPO_DIR, STATIC_TEXT, Implementation
from .stats import percentile
from .stdio_client import ServerError, StdioPeer

ECHO_TEXT = "hello"


@dataclass(frozen=True)
class StdioPlan:
    """How much work each stdio session does."""

    warmup_calls: int
    sequential_calls: int
    list_calls: int
    read_calls: int
    pipelined_calls: int
    window: int
    big_calls: int
    big_bytes: int
    phase_timeout_s: float


def _spawn(impl: Implementation, stderr: IO[bytes]) -> StdioPeer:
    return StdioPeer(impl.argv("stdio"), impl.env(), REPO_DIR, stderr)


def call_line_parts(tool: str, arguments: dict[str, Any]) -> tuple[bytes, bytes]:
    """Split a pre-encoded tools/call line around its id so each request costs one concatenation."""
    tail = codec.dumps(
        {"method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    )
    return b'{"jsonrpc":"2.0","id":', b"," + tail[1:] + b"\n"


def _text_of(result: dict[str, Any]) -> str:
    content = result.get("content") or []
    return content[0].get("text", "") if content else ""


def cold_start(
    impl: Implementation, stderr: IO[bytes], timeout_s: float
) -> dict[str, float]:
    """Spawn -> initialize response, and spawn -> first tools/call result, in milliseconds."""
    peer = _spawn(impl, stderr)
    try:
        peer.initialize(timeout_s)
        init_ms = (time.perf_counter() - peer.spawned_at) * 1000
        init_bytes = peer.bytes_per_reply((0, 0, 0))
        mark = peer.wire_mark()
        result = peer.request(
            "tools/call", {"name": "echo", "arguments": {"text": ECHO_TEXT}}, timeout_s
        )
        first_ms = (time.perf_counter() - peer.spawned_at) * 1000
        if _text_of(result) != ECHO_TEXT:
            raise ServerError(f"echo returned {result!r}")
        procstat.check_native(peer.pid, impl.expected_native("stdio"))
        return {
            "cold_start_init_ms": init_ms,
            "cold_start_first_call_ms": first_ms,
            "wire_init_bytes": init_bytes,
            "wire_echo_bytes": peer.bytes_per_reply(mark),
        }
    finally:
        peer.stop()


def validate(peer: StdioPeer, timeout_s: float) -> None:
    """Check that the server really implements the tiny benchmark server (tools, resource, results)."""
    tools = {
        tool["name"] for tool in peer.request("tools/list", {}, timeout_s)["tools"]
    }
    if not {"echo", "add"} <= tools:
        raise ServerError(f"tools/list lacks echo/add: {sorted(tools)}")
    echoed = peer.request(
        "tools/call", {"name": "echo", "arguments": {"text": ECHO_TEXT}}, timeout_s
    )
    if _text_of(echoed) != ECHO_TEXT or echoed.get("isError"):
        raise ServerError(f"echo returned {echoed!r}")
    added = peer.request(
        "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}, timeout_s
    )
    if _text_of(added) != "5" or added.get("isError"):
        raise ServerError(f"add(2, 3) returned {added!r}")
    contents = peer.request("resources/read", {"uri": "bench://static"}, timeout_s)[
        "contents"
    ]
    if not contents or contents[0].get("text") != STATIC_TEXT:
        raise ServerError(f"resources/read bench://static returned {contents!r}")


def sequential(
    peer: StdioPeer, line_for: Any, count: int, deadline: float
) -> list[float]:
    """Send `count` requests one at a time; return each round trip in microseconds."""
    latencies: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(count):
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"sequential phase exceeded its time budget after {len(latencies)} calls"
            )
        request_id = peer.next_id()
        line = line_for(request_id)
        started = clock()
        peer.write(line)
        response = peer.read_responses()[0]
        latencies.append((clock() - started) / 1000)
        if response.get("id") != request_id or "result" not in response:
            raise ServerError(
                f"bad response to request {request_id}: {str(response)[:300]}"
            )
    return latencies


def pipelined(
    peer: StdioPeer, head: bytes, tail: bytes, count: int, window: int, deadline: float
) -> float:
    """Keep `window` tools/call requests in flight until `count` are answered; returns elapsed seconds."""
    first_id = peer._next_id
    peer._next_id += count
    ids = iter(range(first_id, first_id + count))

    def batch(size: int) -> bytes:
        return b"".join(head + str(next(ids)).encode() + tail for _ in range(size))

    started = time.perf_counter()
    sent = min(window, count)
    peer.write(batch(sent))
    received = errors = 0
    while received < count:
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"pipelined phase exceeded its time budget after {received} of {count} calls"
            )
        responses = peer.read_responses()
        received += len(responses)
        errors += sum(
            1
            for response in responses
            if "result" not in response or response["result"].get("isError")
        )
        more = min(len(responses), count - sent)
        if more:
            peer.write(batch(more))
            sent += more
    elapsed = time.perf_counter() - started
    if errors:
        raise ServerError(f"{errors} of {count} pipelined calls failed")
    return elapsed


def session(
    impl: Implementation, plan: StdioPlan, stderr: IO[bytes]
) -> dict[str, float]:
    """One stdio session: memory after initialize, latencies, throughput, CPU per call, 1 MiB echo."""
    out: dict[str, float] = {}
    peer = _spawn(impl, stderr)
    try:
        peer.initialize(plan.phase_timeout_s)
        out["rss_after_init_mib"] = procstat.rss_mib(peer.pid)
        validate(peer, plan.phase_timeout_s)
        procstat.check_native(peer.pid, impl.expected_native("stdio"))
        head, tail = call_line_parts("echo", {"text": ECHO_TEXT})

        def echo_line(request_id: int) -> bytes:
            return head + str(request_id).encode() + tail

        deadline = time.monotonic() + plan.phase_timeout_s
        sequential(peer, echo_line, plan.warmup_calls, deadline)
        cpu_before = procstat.cpu_seconds(peer.pid)
        mark = peer.wire_mark()
        latencies = sequential(peer, echo_line, plan.sequential_calls, deadline)
        out["cpu_per_call_seq_us"] = (
            (procstat.cpu_seconds(peer.pid) - cpu_before) / plan.sequential_calls * 1e6
        )
        out["wire_echo_bytes"] = peer.bytes_per_reply(mark)
        out["seq_p50_us"] = percentile(latencies, 0.5)
        out["seq_p99_us"] = percentile(latencies, 0.99)

        def list_line(request_id: int) -> bytes:
            return (
                b'{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}\n'
                % request_id
            )

        def read_line(request_id: int) -> bytes:
            return (
                b'{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"bench://static"}}\n'
                % request_id
            )

        deadline = time.monotonic() + plan.phase_timeout_s
        mark = peer.wire_mark()
        out["tools_list_p50_us"] = percentile(
            sequential(peer, list_line, plan.list_calls, deadline), 0.5
        )
        out["wire_tools_list_bytes"] = peer.bytes_per_reply(mark)
        mark = peer.wire_mark()
        out["resources_read_p50_us"] = percentile(
            sequential(peer, read_line, plan.read_calls, deadline), 0.5
        )
        out["wire_read_bytes"] = peer.bytes_per_reply(mark)

        deadline = time.monotonic() + plan.phase_timeout_s
        cpu_before = procstat.cpu_seconds(peer.pid)
        mark = peer.wire_mark()
        elapsed = pipelined(
            peer, head, tail, plan.pipelined_calls, plan.window, deadline
        )
        out["wire_echo_pipelined_bytes"] = peer.bytes_per_reply(mark)
        out["pipelined_calls_per_s"] = plan.pipelined_calls / elapsed
        out["cpu_per_call_pipelined_us"] = (
            (procstat.cpu_seconds(peer.pid) - cpu_before) / plan.pipelined_calls * 1e6
        )

        if plan.big_calls:
            mark = peer.wire_mark()
            out["echo_1mib_ms"] = _big_echo(peer, plan)
            out["wire_echo_1mib_bytes"] = peer.bytes_per_reply(mark)
        out["peak_rss_mib"] = procstat.peak_rss_mib(peer.pid)
        out["rss_end_mib"] = procstat.rss_mib(peer.pid)
        return out
    finally:
        peer.stop()


def _big_echo(peer: StdioPeer, plan: StdioPlan) -> float:
    """Median round trip (ms) of echoing a `big_bytes` text, checking the text comes back whole."""
    text = "x" * plan.big_bytes
    head, tail = call_line_parts("echo", {"text": text})
    timings: list[float] = []
    for _ in range(plan.big_calls):
        request_id = peer.next_id()
        line = head + str(request_id).encode() + tail
        started = time.perf_counter()
        peer.write(line, plan.phase_timeout_s)
        response = peer.read_responses(plan.phase_timeout_s)[0]
        timings.append((time.perf_counter() - started) * 1000)
        if "result" not in response or _text_of(response["result"]) != text:
            raise ServerError(f"1 MiB echo came back wrong: {str(response)[:300]}")
    return percentile(timings, 0.5)


def leak_check(
    impl: Implementation,
    first: int,
    total: int,
    window: int,
    stderr: IO[bytes],
    timeout_s: float,
) -> dict[str, float]:
    """RSS after `first` pipelined calls and after `total` calls, and the growth between them in percent."""
    peer = _spawn(impl, stderr)
    try:
        peer.initialize(timeout_s)
        head, tail = call_line_parts("echo", {"text": ECHO_TEXT})
        deadline = time.monotonic() + timeout_s
        pipelined(peer, head, tail, first, window, deadline)
        rss_first = procstat.rss_mib(peer.pid)
        pipelined(peer, head, tail, total - first, window, deadline)
        rss_total = procstat.rss_mib(peer.pid)
        return {
            "rss_after_leak_first_mib": rss_first,
            "rss_after_leak_total_mib": rss_total,
            "rss_growth_pct": (rss_total - rss_first) / rss_first * 100,
        }
    finally:
        peer.stop()


def describe(result: dict[str, Any]) -> str:
    """Compact one-line summary for progress output."""
    return ", ".join(f"{key}={value:.1f}" for key, value in result.items())
