"""Measurements over the legacy HTTP+SSE transport (2024-11-05): GET /sse, POST to the announced endpoint.

Each worker owns one session: a long-lived GET /sse stream (the `endpoint` event names the URL to
POST to; answers arrive there as `message` events) and a keep-alive connection for its POSTs.
Closed loop: a worker posts a call (202 Accepted) and waits for its answer on the stream.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import IO, Any

from . import processes, procstat
from .http_client import HttpProtocolError
from .implementations import REPO_DIR, Implementation
from .stats import percentile

WARMUP_CALLS = 2
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}


class LegacySession:
    """One legacy HTTP+SSE session on 127.0.0.1:port."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.endpoint = ""
        self._events: asyncio.StreamReader | None = None
        self._events_writer: asyncio.StreamWriter | None = None
        self._posts: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.payload_bytes = 0  # bytes of the answers received by `call`, their ids not counted
        self.answers = 0

    async def open(self) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 24)
        writer.write(b"GET /sse HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\n\r\n" % self.port)
        status = await reader.readline()
        if b" 200 " not in status:
            raise HttpProtocolError(f"GET /sse answered {status!r}")
        while (await reader.readline()) not in (b"\r\n", b""):
            pass  # headers
        self._events, self._events_writer = reader, writer
        kind, data = await self._next_event()
        if kind != "endpoint":
            raise HttpProtocolError(f"expected the endpoint event first, got {kind!r}")
        self.endpoint = data
        self._posts = await asyncio.open_connection("127.0.0.1", self.port)
        await self.call(INIT)
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def _next_event(self) -> tuple[str, str]:
        """The next SSE event (chunked transfer framing lines are skipped as non-field lines)."""
        assert self._events is not None
        kind, data = "message", []
        while True:
            line = (await self._events.readline()).decode().rstrip("\r\n")
            if not line:
                if data:
                    return kind, "\n".join(data)
                continue
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())

    async def _post(self, message: dict[str, Any]) -> None:
        assert self._posts is not None
        reader, writer = self._posts
        body = json.dumps(message).encode()
        writer.write(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (self.endpoint.encode(), self.port, len(body), body))
        status = await reader.readline()
        if b" 202 " not in status:
            raise HttpProtocolError(f"POST {self.endpoint} answered {status!r}")
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if length:
            await reader.readexactly(length)

    async def call(self, message: dict[str, Any]) -> dict[str, Any]:
        await self._post(message)
        while True:
            kind, data = await self._next_event()
            if kind == "message":
                answer = json.loads(data)
                if answer.get("id") == message["id"]:
                    if "error" in answer or answer.get("result", {}).get("isError"):
                        raise HttpProtocolError(f"call failed: {data[:200]}")
                    self.payload_bytes += len(data.encode()) - len(json.dumps(message["id"]))
                    self.answers += 1
                    return answer

    def close(self) -> None:
        for writer in (self._events_writer, self._posts[1] if self._posts else None):
            if writer is not None:
                writer.transport.abort()


async def _measure(port: int, pid: int, concurrency: int, duration_s: float, max_calls: int) -> dict[str, Any]:
    sessions = [LegacySession(port) for _ in range(concurrency)]
    try:
        for number, session in enumerate(sessions):
            await session.open()
            for warm in range(WARMUP_CALLS):  # first calls pay one-off imports (FastMCP: about 0.5 s)
                await session.call({"jsonrpc": "2.0", "id": 900_000_000 + number * 100 + warm, "method": "tools/call",
                                    "params": {"name": "echo", "arguments": {"text": "hello"}}})
        latencies: list[float] = []
        remaining = [max_calls]
        stop_at = time.perf_counter() + duration_s

        async def worker(session: LegacySession, base: int) -> None:
            request_id = base
            while remaining[0] > 0 and time.perf_counter() < stop_at:
                remaining[0] -= 1
                request_id += 1
                started = time.perf_counter()
                await session.call({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                                    "params": {"name": "echo", "arguments": {"text": "hello"}}})
                latencies.append(time.perf_counter() - started)

        cpu_before = procstat.cpu_seconds(pid)
        bytes_before = sum(session.payload_bytes for session in sessions)
        answers_before = sum(session.answers for session in sessions)
        started = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(*(worker(s, 1_000_000 * (i + 1)) for i, s in enumerate(sessions))),
                               duration_s + 30)
        elapsed = time.perf_counter() - started
        cpu = procstat.cpu_seconds(pid) - cpu_before
        calls = len(latencies)
        answers = sum(session.answers for session in sessions) - answers_before
        payload = sum(session.payload_bytes for session in sessions) - bytes_before
        return {
            "wire_payload_bytes": payload / answers if answers else float("nan"),
            "calls_per_s": calls / elapsed if elapsed else float("nan"),
            "p50_ms": percentile(latencies, 0.5) * 1000,
            "p99_ms": percentile(latencies, 0.99) * 1000,
            "cpu_per_call_us": cpu / calls * 1e6 if calls else float("nan"),
        }
    except (TimeoutError, ConnectionError, asyncio.IncompleteReadError) as exc:
        raise HttpProtocolError(f"legacy SSE session failed: {exc!r}") from exc
    finally:
        for session in sessions:
            session.close()


def run(impl: Implementation, concurrencies: tuple[int, ...], duration_s: float, max_calls: int,
        start_timeout_s: float, stderr: IO[bytes]) -> dict[str, Any]:
    """Start `impl` with its legacy HTTP+SSE transport and measure each concurrency level."""
    port = processes.free_port()
    proc = processes.spawn(impl.argv("sse", port), impl.env(), REPO_DIR, stderr, pipes=False)
    try:
        processes.wait_for_port(port, proc, start_timeout_s)
        procstat.check_native(proc.pid, impl.expected_native("http"))
        out: dict[str, Any] = {}
        for concurrency in concurrencies:
            figures = asyncio.run(_measure(port, proc.pid, concurrency, duration_s, max_calls))
            for key, value in figures.items():
                out[f"c{concurrency}_{key}"] = value
        return out
    finally:
        processes.stop(proc)
