"""What the new request-path layers cost per call: middleware chains and telemetry, as CPU time.

    PYTHONPATH=. .venv/bin/python bench/telemetry_overhead.py [--calls 5000] [--rounds 9] [--profile ROW]

Each row is the same trivial `tools/call` (`echo`, an `async def` tool) through the in-memory session
(no transport, no JSON: what the layers add shows undiluted), in one process:

- `baseline`: no middleware, telemetry not configured;
- `empty chain`: `MCPServer(middleware=[])` (the same as none: the pipeline is not built);
- `5 pass-through`: five middlewares overriding `on_request` and `on_call_tool`;
- `telemetry unconfigured`: `ensure_telemetry` with nothing in the environment (it installs nothing);
- `JSON-log scope only`: `--log-format json` without exporters (the middleware keeps the request scope);
- `spans + OTLP metrics`: tracing and metrics exporting over OTLP/HTTP to a receiver on loopback
  (batched: the export runs on the SDK's threads, and counts: the CPU is the whole process's; the
  receiver is another process);
- `spans + OTLP + Prometheus`: the same and a Prometheus registry;
- `OTel SDK alone`: the baseline's call inside one span and one histogram sample made straight with the SDK
  (same attributes, same providers and exporters): what any framework pays for that record.

Every row's session is set up first; then `--rounds` rounds, each running `--calls` calls of every row
in turn (the order rotates), CPU time (`time.process_time`: all threads, so the exporter's work counts)
per call, and the event loop's thread's CPU alone (`time.thread_time`: the request path without the
exporters' threads). The median over rounds is printed with min-max and its difference to the baseline's; the budgets
(bench/README.md) bound the difference of the least rounds: other processes on the machine only ever add
CPU time (shared caches, a busy sibling core), so the least-disturbed round is the closest to the cost.
`--rows A,B` measures some rows only; `--profile ROW` runs one row under cProfile instead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import mcp_kit
from mcp_kit import MCPServer
from mcp_kit._eras.session import Session
from mcp_kit._protocol.jsonrpc import Request

BUDGETS = {"empty chain": 0.5, "5 pass-through": 5.0, "telemetry unconfigured": 1.0, "spans + OTLP metrics": 25.0}


def make_app(middleware: list[Any] | None = None) -> MCPServer:
    app = MCPServer("bench", middleware=middleware) if middleware is not None else MCPServer("bench")

    @app.tool
    async def echo(text: str) -> str:
        """Echo."""
        return text

    return app


def pass_through(count: int) -> list[Any]:
    class PassThrough(mcp_kit.Middleware):
        async def on_request(self, call: Any, call_next: Any) -> Any:
            return await call_next(call)

        async def on_call_tool(self, call: Any, call_next: Any) -> Any:
            return await call_next(call)

    return [PassThrough() for _ in range(count)]


class _Port:
    """The outbound port of a session that never talks back."""

    def start_soon(self, *args: Any) -> None: ...

    def post(self, *args: Any) -> None: ...

    async def notify(self, *args: Any) -> None: ...

    def was_cancelled(self, request_id: Any) -> bool:
        return False


RECEIVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Sink(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def receiver() -> tuple[str, subprocess.Popen[str]]:
    """An OTLP/HTTP sink in its own process (its CPU is not the server's), answering 200 to every POST."""
    process = subprocess.Popen([sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return f"http://127.0.0.1:{int(process.stdout.readline())}", process


def rows() -> dict[str, Callable[[], MCPServer]]:
    from mcp_kit._telemetry.options import ensure_telemetry

    def telemetry(prometheus: bool, exporting: bool, log_format: str | None = None) -> Callable[[], MCPServer]:
        def build() -> MCPServer:
            app = make_app()
            keys = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER")
            saved = {key: os.environ.pop(key, None) for key in keys}
            if exporting:
                os.environ.update(zip(keys, (ENDPOINT, "otlp", "otlp"), strict=True))
            try:
                ensure_telemetry(app, metrics=prometheus, log_format=log_format)
            finally:
                for key, value in saved.items():
                    os.environ.pop(key, None)
                    if value is not None:
                        os.environ[key] = value
            return app
        return build

    return {"baseline": make_app, "empty chain": lambda: make_app([]), "5 pass-through": lambda: make_app(
        pass_through(5)), "telemetry unconfigured": telemetry(False, False),
        "JSON-log scope only": telemetry(False, False, "json"),
        "spans + OTLP metrics": telemetry(False, True), "spans + OTLP + Prometheus": telemetry(True, True)}


ENDPOINT = ""


class SdkAlone:
    """The baseline's session inside what the OpenTelemetry SDK itself costs for the same record: one SERVER span
    with the same attributes, made current while the call runs, and one duration sample with the same labels,
    through the providers the telemetry rows configured (the same exporters). No mcp_kit code in between."""

    def __init__(self, session: Session) -> None:
        from opentelemetry import context, metrics, trace

        self.session = session
        self.tracer = trace.get_tracer_provider().get_tracer("sdk-alone")
        self.histogram = metrics.get_meter_provider().get_meter("sdk-alone").create_histogram(
            "sdk.alone.duration", unit="s")
        self.trace, self.context = trace, context
        self.kind = trace.SpanKind.SERVER
        self.labels = {"mcp.method.name": "tools/call", "mcp.protocol.version": "2025-11-25",
                       "network.transport": "pipe", "gen_ai.tool.name": "echo"}

    async def handle_request(self, request: Request) -> Any:
        attributes = {**self.labels, "gen_ai.operation.name": "execute_tool", "jsonrpc.request.id": str(request.id),
                      "mcp.session.id": "0123456789abcdef0123456789abcdef"}
        span = self.tracer.start_span("tools/call echo", kind=self.kind, attributes=attributes)
        token = self.context.attach(self.trace.set_span_in_context(span))
        started = time.perf_counter()
        try:
            return await self.session.handle_request(request)
        finally:
            self.histogram.record(time.perf_counter() - started, self.labels)
            self.context.detach(token)
            span.end()


async def measure(calls: int, rounds: int, only: str | None, wanted: set[str] | None = None) -> dict[str, list[float]]:
    from contextlib import AsyncExitStack

    request = Request(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    sessions: dict[str, Session] = {}
    async with AsyncExitStack() as stack:
        for name, build in rows().items():
            if wanted is not None and name not in wanted | {"baseline"}:
                continue
            if only is not None and name != only and not (only == "OTel SDK alone" and name in (
                    "baseline", "spans + OTLP metrics")):
                continue
            app = build()
            await stack.enter_async_context(app.running())
            session = Session(app, _Port())  # type: ignore[arg-type]
            await session.handle_request(Request(0, "initialize", {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}))
            for _ in range(2000):  # warm up: schemas built, caches filled
                await session.handle_request(request)
            sessions[name] = session
        if (only is None or only == "OTel SDK alone") and (wanted is None or "OTel SDK alone" in wanted):
            try:
                sessions["OTel SDK alone"] = SdkAlone(sessions["baseline"])  # type: ignore[assignment]
            except (ImportError, KeyError):
                pass
        if only is not None:
            sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != os.path.dirname(
                os.path.abspath(__file__))]  # bench/profile.py would shadow the standard library's `profile`
            import cProfile
            import pstats

            profile = cProfile.Profile()
            profile.enable()
            for _ in range(calls * rounds):
                await sessions[only].handle_request(request)
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(30)
            return {}
        samples: dict[str, list[float]] = {name: [] for name in sessions}
        samples |= {f"{name} [loop thread]": [] for name in sessions}
        names = list(sessions)
        for index in range(rounds):
            for name in names[index % len(names):] + names[:index % len(names)]:
                session = sessions[name]
                started, on_loop = time.process_time(), time.thread_time()
                for _ in range(calls):
                    await session.handle_request(request)
                samples[name].append((time.process_time() - started) / calls * 1e6)
                samples[f"{name} [loop thread]"].append((time.thread_time() - on_loop) / calls * 1e6)
        return samples


def main() -> None:
    global ENDPOINT
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--rows", help="comma-separated rows to measure (the baseline always is)")
    parser.add_argument("--profile", metavar="ROW", help="one row under cProfile (e.g. 'spans + OTLP metrics')")
    args = parser.parse_args()
    ENDPOINT, sink = receiver()
    os.environ.setdefault("OTEL_SERVICE_NAME", "bench")
    try:
        samples = asyncio.run(measure(args.calls, args.rounds, args.profile,
                                        set(args.rows.split(",")) if args.rows else None))
    finally:
        sink.terminate()
        sink.wait()
    if not samples:
        return
    base, base_least = statistics.median(samples["baseline"]), min(samples["baseline"])
    print(f"CPU per tools/call (all threads), {args.rounds} interleaved rounds of {args.calls} calls: median "
          "(min-max), and each row's least round minus the baseline's least round (what the budget bounds)")
    for name, values in samples.items():
        if name.endswith("[loop thread]"):
            continue
        median, least = statistics.median(values), min(values)
        extra = least - base_least
        budget = BUDGETS.get(name)
        verdict = "" if budget is None else f"  budget <= {budget:g} us: {'met' if extra <= budget else 'NOT met'}"
        print(f"  {name:27} {median:7.2f} us ({least:.2f}-{max(values):.2f})  median {median - base:+7.2f}  "
              f"least {extra:+7.2f} us{verdict}")
    loop_base = min(samples["baseline [loop thread]"])
    print("the loop thread's CPU alone (the request path, without the exporters' threads): least round, and minus "
          "the baseline's")
    for name, values in samples.items():
        if name.endswith("[loop thread]"):
            least = min(values)
            print(f"  {name.removesuffix(' [loop thread]'):27} {least:7.2f} us  {least - loop_base:+7.2f} us")


if __name__ == "__main__":
    main()
