"""A stopping HTTP server waits for requests in flight at most `--shutdown-grace` seconds, then exits.

Without the bound, uvicorn waits for every connection to close: a tool call that never ends (or a
client holding a stream) keeps a SIGTERM'd server alive forever.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import httpx
import pytest

from tests.helpers.support import http_server

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="sends SIGTERM")

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_sigterm_with_a_call_in_flight_exits_after_the_grace() -> None:
    with http_server(["-m", "tests.helpers.fault_server", "--shutdown-grace", "1"]) as base:
        url = f"{base}/mcp"
        opened = httpx.post(
            url,
            headers=HEADERS,
            timeout=30,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            },
        )
        session = {**HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        httpx.post(url, headers=session, timeout=30, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        running = threading.Event()
        ended: list[str] = []

        def call() -> None:
            body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "forever", "arguments": {"report": True}, "_meta": {"progressToken": "p"}}}
            try:
                with httpx.stream("POST", url, headers=session, json=body, timeout=60) as reply:
                    for line in reply.iter_lines():
                        if line.startswith("data:") and "notifications/progress" in line:
                            running.set()  # the tool is running: the call is in flight
            except httpx.HTTPError as exc:
                ended.append(type(exc).__name__)
            else:
                ended.append("closed")

        caller = threading.Thread(target=call, daemon=True)
        caller.start()
        assert running.wait(30), "the tool never started"
        base.process.send_signal(signal.SIGTERM)
        try:
            code = base.process.wait(timeout=30)  # hangs without the grace: uvicorn waits for the call forever
        except subprocess.TimeoutExpired:
            pytest.fail("the server was still running 30 s after SIGTERM with a 1 s grace")
        caller.join(30)
        assert (
            code in (0, -signal.SIGTERM) and ended
        )  # uvicorn re-raises the signal it stopped on; the call ended with the connection
