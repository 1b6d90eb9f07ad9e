"""Curve: payload size. `echo` of 1 KiB ... 1 MiB over stdio and over Streamable HTTP (JSON replies).

One stdio session and one HTTP server (`--json-response`, one session, one call at a time) per
repetition; for each size a couple of warm-up calls, then `calls` sequential calls: median round trip,
server CPU per call, bytes per reply (checked equal across implementations: the text comes back once,
as plain text content). The echoed text is checked for its length on every call.
"""

from __future__ import annotations

import asyncio
import time
from typing import IO, Any

from . import codec, processes, procstat
from .curves import Curve, Figure, key
from .http_client import HttpConnection, HttpProtocolError, response_for
from .implementations import REPO_DIR, Implementation
from .stats import percentile
from .stdio_client import ServerError, StdioPeer
from .stdio_suite import call_line_parts


def calls_for(size_kib: int, settings: dict[str, Any]) -> int:
    """More calls for small payloads (CPU time comes in 10 ms ticks), at least `min_calls`."""
    return max(settings["min_calls"], min(settings["max_calls"], settings["budget_kib"] // size_kib))


def _text_length(response: dict[str, Any]) -> int:
    content = (response.get("result") or {}).get("content") or [{}]
    return len(content[0].get("text", ""))


def _stdio(impl: Implementation, settings: dict[str, Any], stderr: IO[bytes]) -> dict[str, float]:
    out: dict[str, float] = {}
    peer = StdioPeer(impl.argv("stdio"), impl.env(), REPO_DIR, stderr)
    try:
        peer.initialize(settings["timeout_s"])
        for size in settings["sizes_kib"]:
            text = "x" * (size * 1024)
            head, tail = call_line_parts("echo", {"text": text})
            timings: list[float] = []
            calls = calls_for(size, settings)
            cpu_before = mark = None
            for number in range(settings["warmup_calls"] + calls):
                if number == settings["warmup_calls"]:
                    cpu_before, mark = procstat.cpu_seconds(peer.pid), peer.wire_mark()
                request_id = peer.next_id()
                started = time.perf_counter()
                peer.write(head + str(request_id).encode() + tail, settings["timeout_s"])
                response = peer.read_responses(settings["timeout_s"])[0]
                timings.append((time.perf_counter() - started) * 1000)
                if response.get("id") != request_id or _text_length(response) != len(text):
                    raise ServerError(f"echo of {size} KiB came back wrong: {str(response)[:200]}")
            assert cpu_before is not None and mark is not None
            out[key("stdio_ms", size)] = percentile(timings[settings["warmup_calls"] :], 0.5)
            out[key("stdio_cpu_us", size)] = (procstat.cpu_seconds(peer.pid) - cpu_before) / calls * 1e6
            out[key("stdio_bytes", size)] = peer.bytes_per_reply(mark)
        return out
    finally:
        peer.stop()


async def _http_sizes(port: int, pid: int, settings: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    conn = HttpConnection(port)
    watchdog = asyncio.get_running_loop().call_later(settings["timeout_s"], conn.abort)
    try:
        await conn.open()
        await conn.initialize()
        request_id = 0
        for size in settings["sizes_kib"]:
            text = "x" * (size * 1024)
            calls = calls_for(size, settings)
            timings: list[float] = []
            payload = 0
            cpu_before = 0.0
            for number in range(settings["warmup_calls"] + calls):
                if number == settings["warmup_calls"]:
                    cpu_before, payload = procstat.cpu_seconds(pid), 0
                request_id += 1
                body = codec.dumps(
                    {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"text": text}}}
                )
                started = time.perf_counter()
                reply = await conn.post(body)
                timings.append((time.perf_counter() - started) * 1000)
                message = response_for(reply, request_id)
                if _text_length(message) != len(text):
                    raise HttpProtocolError(f"echo of {size} KiB came back wrong")
                payload += reply.payload_bytes - len(str(request_id))
            out[key("http_ms", size)] = percentile(timings[settings["warmup_calls"] :], 0.5)
            out[key("http_cpu_us", size)] = (procstat.cpu_seconds(pid) - cpu_before) / calls * 1e6
            out[key("http_bytes", size)] = payload / calls
        await conn.delete_session()
        return out
    except (ConnectionError, asyncio.IncompleteReadError) as exc:
        raise HttpProtocolError(f"connection failed or timed out: {exc!r}") from exc
    finally:
        watchdog.cancel()
        await conn.close()


def _http(impl: Implementation, settings: dict[str, Any], stderr: IO[bytes]) -> dict[str, float]:
    port = processes.free_port()
    proc = processes.spawn(impl.argv("http", port, json_response=True), impl.env(), REPO_DIR, stderr, pipes=False)
    try:
        processes.wait_for_port(port, proc, settings["timeout_s"])
        procstat.check_native(proc.pid, impl.expected_native("http"))
        return asyncio.run(_http_sizes(port, proc.pid, settings))
    finally:
        processes.stop(proc)


def measure(impl: Implementation, settings: dict[str, Any], stderr: IO[bytes]) -> dict[str, float]:
    """One repetition: every size over stdio, then over HTTP."""
    return {**_stdio(impl, settings, stderr), **_http(impl, settings, stderr)}


CURVE = Curve(
    name="payload",
    title="Payload size: echo round trip",
    x_label="echoed text (KiB)",
    xs=lambda settings: list(settings["sizes_kib"]),
    figures=[
        Figure("stdio_ms", "stdio echo round trip (p50)", "ms", True, "stdio_bytes", log_y=True),
        Figure("stdio_cpu_us", "stdio server CPU per call", "us", True, "stdio_bytes", log_y=True),
        Figure("http_ms", "HTTP JSON echo round trip (p50)", "ms", True, "http_bytes", log_y=True),
        Figure("http_cpu_us", "HTTP JSON server CPU per call", "us", True, "http_bytes", log_y=True),
    ],
    settings={
        "quick": {"sizes_kib": (1, 4, 16, 64, 256, 1024), "warmup_calls": 2, "min_calls": 10, "max_calls": 1000,
                  "budget_kib": 10240, "timeout_s": 120},
        "full": {"sizes_kib": (1, 4, 16, 64, 256, 1024), "warmup_calls": 5, "min_calls": 50, "max_calls": 5000,
                 "budget_kib": 51200, "timeout_s": 300},
    },
    measure=measure,
    command="bench/scaling.py --curve payload",
    transports=("stdio", "http"),
    notes=[
        "No target is set here; the bytes per reply column shows the work is equal.",
        "Server CPU comes in 10 ms clock ticks: calls per size = budget / size, so small sizes get more calls.",
    ],
)
