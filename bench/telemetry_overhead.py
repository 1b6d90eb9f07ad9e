"""The cost of telemetry per request: a trivial `tools/call` through the session, measured in process.

    PYTHONPATH=. .venv/bin/python bench/telemetry_overhead.py [--calls 20000]

Three runs of the same loop (the in-memory session, no transport): telemetry unconfigured (nothing installed:
the request path has no OpenTelemetry in it), configured with spans and metrics exporting over OTLP/HTTP to
a receiver on loopback (batched: the export runs on the SDK's threads), and configured with Prometheus too.
Prints microseconds per call of each and the difference to the first. Run it on the commit before
telemetry existed for the unconfigured baseline (the script needs only `mcp_kit.testing`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mcp_kit import MCPServer
from mcp_kit._eras.session import Session
from mcp_kit._protocol.jsonrpc import Request


def make_app() -> MCPServer:
    app = MCPServer("bench")

    @app.tool
    async def echo(text: str) -> str:
        """Echo."""
        return text

    return app


class _Port:
    """The outbound port of a session that never talks back."""

    def start_soon(self, *args: Any) -> None: ...

    def post(self, *args: Any) -> None: ...

    async def notify(self, *args: Any) -> None: ...

    def was_cancelled(self, request_id: Any) -> bool:
        return False


async def per_call(app: MCPServer, calls: int) -> float:
    async with app.running():
        session = Session(app, _Port())  # type: ignore[arg-type]
        await session.handle_request(Request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                               "clientInfo": {"name": "b", "version": "1"}}))
        request = Request(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        for _ in range(2000):  # warm up: schemas built, caches filled
            await session.handle_request(request)
        rounds = []
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(calls // 5):
                await session.handle_request(request)
            rounds.append((time.perf_counter() - started) / (calls // 5) * 1e6)
        return statistics.median(rounds)


def receiver() -> str:
    class Sink(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    base = asyncio.run(per_call(make_app(), args.calls))
    print(f"unconfigured:               {base:6.2f} us/call")
    try:
        from mcp_kit._telemetry.options import ensure_telemetry
    except ImportError:
        return  # a checkout without telemetry: the baseline only
    os.environ.update({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver(), "OTEL_TRACES_EXPORTER": "otlp",
                       "OTEL_METRICS_EXPORTER": "otlp", "OTEL_SERVICE_NAME": "bench"})
    for label, prometheus in (("spans + OTLP metrics:", False), ("spans + OTLP + Prometheus:", True)):
        app = make_app()
        telemetry = ensure_telemetry(app, metrics=prometheus)
        cost = asyncio.run(per_call(app, args.calls))
        telemetry.uninstall()
        print(f"{label:27} {cost:6.2f} us/call  (+{cost - base:.2f})")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
