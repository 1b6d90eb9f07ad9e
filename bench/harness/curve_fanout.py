"""Curve: subscription fan-out. N subscribers to one resource; one tool call triggers the update.

The server registers `bench://counter` and the tool `bump` (`BENCH_FEATURES=fanout`), which calls the
framework's own "this resource changed" (mcp_kit: `app.notify_resource_updated`; SDK:
`ctx.notify_resource_updated`). Two protocol eras, each on a fresh server:

- handshake (2025-11-25): every subscriber is a session with its own GET /mcp event stream that sent
  `resources/subscribe`; the trigger is a `tools/call bump` in the first subscriber's session.
- modern (2026-07-28): every subscriber is one `subscriptions/listen` stream (a POST whose SSE answer
  stays open) asking for `resourceSubscriptions: [bench://counter]`, counted once acknowledged; the
  trigger is a stateless `tools/call bump`.

Subscribers are added up to each N; then one warm-up trigger and `triggers` measured ones: the
triggering call's round trip, and the time from sending it until the last subscriber has read its
`notifications/resources/updated` (the client reads 1000 streams on the same 2 CPUs, so this includes
its own reading; the floor shows that share). Medians over the triggers.
"""

from __future__ import annotations

import asyncio
import time
from typing import IO, Any

from . import codec, processes, procstat
from .curves import Curve, Figure, against_own, at_most, key
from .http_client import HttpConnection, HttpProtocolError, response_for
from .implementations import REPO_DIR, Implementation
from .stats import percentile

COUNTER_URI = "bench://counter"
UPDATED = b"notifications/resources/updated"
ACKNOWLEDGED = b"notifications/subscriptions/acknowledged"
MODERN_VERSION = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "mcp-bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
ERAS = ("handshake", "modern")
SUPPORT = {
    "handshake": {"mcp_kit", "floor"},
    "modern": {"mcp_kit", "sdk", "floor"},
}
WHY_NOT = {  # short: these fill table cells; the curve's notes say more
    ("handshake", "sdk"): "no resources/subscribe",
    ("handshake", "fastmcp"): "no subscriptions",
    ("modern", "fastmcp"): "no subscriptions",
}


class Round:
    """Who has seen the current round's update."""

    def __init__(self, subscribers: int) -> None:
        self.number = 0
        self.subscribers = subscribers
        self.notified = 0
        self.all_at = 0.0
        self.done = asyncio.Event()

    def next(self, subscribers: int) -> None:
        self.number += 1
        self.subscribers = subscribers
        self.notified = 0
        self.done = asyncio.Event()

    def seen(self) -> None:
        self.notified += 1
        if self.notified == self.subscribers:
            self.all_at = time.perf_counter()
            self.done.set()


class Stream:
    """One long-lived event stream (GET /mcp or a subscriptions/listen POST), counting updates as they arrive."""

    def __init__(self, port: int, request: bytes) -> None:
        self.port = port
        self.request = request
        self.updates = 0
        self.joined = 0  # the round number when this subscriber was added (earlier rounds are not its own)
        self.acknowledged = asyncio.Event()
        self._tail = b""
        self._writer: asyncio.StreamWriter | None = None
        self._task: asyncio.Task[None] | None = None

    async def open(self, rounds: Round) -> None:
        self.joined = rounds.number
        reader, self._writer = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 20)
        self._writer.write(self.request)
        head = await reader.readuntil(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0]
        if b" 200 " not in status + b" " or b"text/event-stream" not in head.lower():
            raise HttpProtocolError(f"event stream answered {head[:200]!r}")
        self._task = asyncio.create_task(self._read(reader, rounds))

    async def _read(self, reader: asyncio.StreamReader, rounds: Round) -> None:
        counted_round = 0
        while True:
            data = await reader.read(1 << 16)
            if not data:
                return
            window = self._tail + data
            if not self.acknowledged.is_set() and ACKNOWLEDGED in window:
                self.acknowledged.set()
            self.updates += window.count(UPDATED)
            self._tail = window[-(len(UPDATED) - 1) :]
            due = rounds.number - self.joined
            if due > 0 and self.updates >= due and counted_round < rounds.number:
                counted_round = rounds.number
                rounds.seen()

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self._writer is not None:
            self._writer.transport.abort()


def _headers(lines: dict[str, str]) -> bytes:
    return b"".join(f"{name}: {value}\r\n".encode() for name, value in lines.items())


class Era:
    """How subscribers and the trigger talk in one protocol era."""

    def __init__(self, name: str, port: int) -> None:
        self.name = name
        self.port = port
        self.control = HttpConnection(port, MODERN_VERSION if name == "modern" else None)
        self.trigger_session: str | None = None
        self.next_id = 1

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    async def start(self) -> None:
        await self.control.open()

    async def subscribe(self, rounds: Round) -> Stream:
        if self.name == "handshake":
            self.control.session_id = None
            await self.control.initialize()
            session_id = self.control.session_id
            assert session_id is not None
            if self.trigger_session is None:
                self.trigger_session = session_id
            stream = Stream(self.port, (
                f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAccept: text/event-stream\r\n"
                f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
            ).encode())
            await stream.open(rounds)
            request_id = self._id()
            reply = await self.control.post(codec.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": "resources/subscribe", "params": {"uri": COUNTER_URI}}
            ))
            response_for(reply, request_id)
            stream.acknowledged.set()
            return stream
        body = codec.dumps({
            "jsonrpc": "2.0", "id": self._id(), "method": "subscriptions/listen",
            "params": {"notifications": {"resourceSubscriptions": [COUNTER_URI]}, "_meta": MODERN_META},
        })
        stream = Stream(self.port, (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nMCP-Protocol-Version: {MODERN_VERSION}\r\n"
            "Mcp-Method: subscriptions/listen\r\n\r\n"
        ).encode() + body)
        await stream.open(rounds)
        await asyncio.wait_for(stream.acknowledged.wait(), 30)
        return stream

    async def trigger(self) -> float:
        """Send `tools/call bump`; returns its round trip in ms (raises if it failed)."""
        request_id = self._id()
        params: dict[str, Any] = {"name": "bump", "arguments": {}}
        extra = b""
        if self.name == "modern":
            params["_meta"] = MODERN_META
            extra = _headers({"Mcp-Method": "tools/call", "Mcp-Name": "bump"})
        else:
            self.control.session_id = self.trigger_session
        body = codec.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
        await self.control.reopen_if_closed()  # idle while a slow machine added subscribers: uvicorn closed it
        started = time.perf_counter()
        reply = await self.control.post(body, extra)
        elapsed = (time.perf_counter() - started) * 1000
        message = response_for(reply, request_id)
        if message["result"].get("isError"):
            raise HttpProtocolError(f"bump failed: {message['result']}")
        return elapsed


async def _fan_out(port: int, era_name: str, settings: dict[str, Any]) -> dict[str, float]:
    era = Era(era_name, port)
    await era.start()
    rounds = Round(0)
    streams: list[Stream] = []
    out: dict[str, float] = {}
    try:
        for target in settings["subscribers"]:
            while len(streams) < target:
                streams.append(await era.subscribe(rounds))
            calls: list[float] = []
            spreads: list[float] = []
            for number in range(1 + settings["triggers"]):
                rounds.next(len(streams))
                started = time.perf_counter()
                call_ms = await era.trigger()
                try:
                    await asyncio.wait_for(rounds.done.wait(), settings["notify_timeout_s"])
                except TimeoutError as exc:
                    raise TimeoutError(
                        f"{rounds.notified} of {len(streams)} subscribers notified within "
                        f"{settings['notify_timeout_s']} s"
                    ) from exc
                if number:  # the first trigger at each N is a warm-up
                    calls.append(call_ms)
                    spreads.append((rounds.all_at - started) * 1000)
            out[key(f"{era_name}_call_ms", target)] = percentile(calls, 0.5)
            out[key(f"{era_name}_all_ms", target)] = percentile(spreads, 0.5)
            out[key(f"{era_name}_us_per_subscriber", target)] = percentile(spreads, 0.5) * 1000 / target
        return out
    finally:
        for stream in streams:
            stream.close()
        await era.control.close()


def measure(impl: Implementation, settings: dict[str, Any], stderr: IO[bytes]) -> dict[str, float]:
    """One repetition: each era this framework supports, on a fresh server."""
    out: dict[str, float] = {}
    for era_name in ERAS:
        if impl.base not in SUPPORT[era_name]:
            continue
        port = processes.free_port()
        proc = processes.spawn(
            impl.argv("http", port), impl.env(BENCH_FEATURES="fanout"), REPO_DIR, stderr, pipes=False
        )
        try:
            processes.wait_for_port(port, proc, settings["timeout_s"])
            procstat.check_native(proc.pid, impl.expected_native("http"))
            budget = settings["timeout_s"] + settings["notify_timeout_s"] * (1 + settings["triggers"]) * 4
            out.update(asyncio.run(asyncio.wait_for(_fan_out(port, era_name, settings), budget)))
        finally:
            processes.stop(proc)
    return out


def _why_not(era_name: str) -> dict[str, str]:
    return {base: why for (era, base), why in WHY_NOT.items() if era == era_name}


CURVE = Curve(
    name="fanout",
    title="Subscription fan-out: N subscribers to one resource, one triggering tool call",
    x_label="subscribers",
    xs=lambda settings: list(settings["subscribers"]),
    figures=[
        Figure("handshake_call_ms", "2025-11-25 resources/subscribe: triggering call", "ms", True, log_y=True,
               unsupported=_why_not("handshake")),
        Figure("handshake_all_ms", "2025-11-25 resources/subscribe: all subscribers notified", "ms", True,
               log_y=True, unsupported=_why_not("handshake")),
        Figure("handshake_us_per_subscriber", "2025-11-25: notification time per subscriber", "us", True,
               chart=False, unsupported=_why_not("handshake")),
        Figure("modern_call_ms", "2026-07-28 subscriptions/listen: triggering call", "ms", True, log_y=True,
               unsupported=_why_not("modern")),
        Figure("modern_all_ms", "2026-07-28 subscriptions/listen: all subscribers notified", "ms", True,
               log_y=True, unsupported=_why_not("modern")),
        Figure("modern_us_per_subscriber", "2026-07-28: notification time per subscriber", "us", True,
               chart=False, unsupported=_why_not("modern")),
    ],
    settings={
        "quick": {"subscribers": (1, 10, 100, 1000), "triggers": 3, "notify_timeout_s": 30, "timeout_s": 60},
        "full": {"subscribers": (1, 10, 100, 1000), "triggers": 10, "notify_timeout_s": 30, "timeout_s": 120},
    },
    measure=measure,
    command="bench/scaling.py --curve fanout",
    unsupported={"fastmcp": "no subscriptions"},
    transports=("http",),
    targets=[
        against_own("handshake_call_ms", 1000, 1, 2),
        at_most("handshake_all_ms", 1000, 20, "ms"),
        against_own("modern_call_ms", 1000, 1, 2),
        at_most("modern_all_ms", 1000, 20, "ms"),
    ],
    notes=[
        "SDK: MCPServer's ctx.notify_resource_updated reaches subscriptions/listen streams (2026-07-28) only; it "
        "serves no resources/subscribe (the low-level Server has hooks, the subscriber lists would be ours).",
        "FastMCP 4.1.6 has no resource subscriptions (it declares subscribe: false).",
        "The floor keeps bare lists of streams and writes one pre-encoded event to each: what the protocol and "
        "this client (reading every stream on the same CPUs) cost at the least.",
    ],
)
