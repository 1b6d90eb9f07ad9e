"""Streamable HTTP and legacy SSE against a real uvicorn on 127.0.0.1: sessions, guards, resumption."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.helpers.support import ServerURL, http_server

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with http_server(["examples/demo_server.py"]) as base:
        yield base


@pytest.fixture(scope="module")
def guarded() -> Iterator[ServerURL]:
    args = ["examples/demo_server.py", "--auth-token", TOKEN, "--max-sessions", "2", "--session-ttl", "1"]
    with http_server(args) as base:
        yield base


def sse_messages(text: str) -> list[dict[str, Any]]:
    """The JSON payloads of the `data:` lines in an SSE body."""
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]


def open_session(base: str, **headers: str) -> str:
    response = httpx.post(f"{base}/mcp", json=INIT, headers={**ACCEPT, **headers})
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    initialized = httpx.post(f"{base}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                             headers={**ACCEPT, "Mcp-Session-Id": session_id, **headers})
    assert initialized.status_code == 202
    return session_id


def call(base: str, session_id: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(f"{base}/mcp", json=body, headers={**ACCEPT, "Mcp-Session-Id": session_id,
                                                         "MCP-Protocol-Version": "2025-11-25", **headers}, timeout=10)


def test_session_shape(server: str) -> None:
    session_id = open_session(server)
    listed = call(server, session_id, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert listed.headers["content-type"].startswith("text/event-stream")
    assert [m for m in sse_messages(listed.text) if m.get("id") == 2][0]["result"]["tools"]
    assert call(server, "", {"jsonrpc": "2.0", "id": 3, "method": "ping"}).status_code == 400  # missing
    assert call(server, "nope", {"jsonrpc": "2.0", "id": 3, "method": "ping"}).status_code == 404
    assert call(server, session_id, {"jsonrpc": "2.0", "id": 4, "method": "ping"},
                **{"MCP-Protocol-Version": "1999-01-01"}).status_code == 400
    bad_json = httpx.post(f"{server}/mcp", content=b"{not json", headers={**ACCEPT, "Mcp-Session-Id": session_id})
    assert bad_json.status_code == 400 and bad_json.json()["error"]["code"] == -32700
    assert httpx.delete(f"{server}/mcp", headers={"Mcp-Session-Id": session_id}).status_code == 200
    assert call(server, session_id, {"jsonrpc": "2.0", "id": 5, "method": "ping"}).status_code == 404
    assert httpx.get(f"{server}/healthz").json() == {"status": "ok"}


def test_dns_rebinding_protection(server: str) -> None:
    evil_origin = httpx.post(f"{server}/mcp", json=INIT, headers={**ACCEPT, "Origin": "http://evil.example.com"})
    assert evil_origin.status_code == 403
    evil_host = httpx.post(f"{server}/mcp", json=INIT, headers={**ACCEPT, "Host": "evil.example.com"})
    assert evil_host.status_code == 403
    port = server.rsplit(":", 1)[1]
    local = httpx.post(f"{server}/mcp", json=INIT, headers={**ACCEPT, "Origin": f"http://localhost:{port}"})
    assert local.status_code == 200


def test_bearer_token_body_limit_session_cap_and_expiry(guarded: ServerURL) -> None:
    missing = httpx.post(f"{guarded}/mcp", json=INIT, headers=ACCEPT)
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    wrong = httpx.post(f"{guarded}/mcp", json=INIT, headers={**ACCEPT, "Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.get(f"{guarded}/healthz").status_code == 200  # load balancers need no token
    huge = httpx.post(f"{guarded}/mcp", content=b"x" * (17 << 20), headers={**ACCEPT, **auth})
    assert huge.status_code == 413
    first = open_session(guarded, **auth)
    open_session(guarded, **auth)
    full = httpx.post(f"{guarded}/mcp", json=INIT, headers={**ACCEPT, **auth})
    assert full.status_code == 503
    guarded.log.wait_for(f"session {first} expired", 10)  # the ttl is 1 s (a request would count as activity)
    assert call(guarded, first, {"jsonrpc": "2.0", "id": 9, "method": "ping"}, **auth).status_code == 404
    assert open_session(guarded, **auth)  # expired sessions free their places


def test_dropped_stream_is_resumed_with_last_event_id(server: str) -> None:
    session_id = open_session(server)
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": 1.0}, "_meta": {"progressToken": "p"}}}
    headers = {**ACCEPT, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
    last_id = None
    seen: list[dict[str, Any]] = []
    with httpx.stream("POST", f"{server}/mcp", json=body, headers=headers, timeout=10) as response:
        for line in response.iter_lines():  # read the priming event and one progress event, then drop
            if line.startswith("id:"):
                last_id = line[3:].strip()
            if line.startswith("data:") and line[5:].strip():
                seen.append(json.loads(line[5:]))
                break
    assert last_id is not None and seen[0]["method"] == "notifications/progress"
    resumed = httpx.get(f"{server}/mcp", headers={"Accept": "text/event-stream", "Mcp-Session-Id": session_id,
                                                   "MCP-Protocol-Version": "2025-11-25", "Last-Event-ID": last_id},
                        timeout=10)
    messages = sse_messages(resumed.text)
    answer = [m for m in messages if m.get("id") == 7]
    assert answer and answer[0]["result"]["content"][0]["text"] == "slept 1.0 s"
    progress = [m["params"]["progress"] for m in messages if m.get("method") == "notifications/progress"]
    assert progress and progress[0] == 2 and progress == sorted(progress)  # nothing replayed twice, nothing lost


def test_json_response_mode_and_batch_rejection(server: str) -> None:
    session_id = open_session(server)
    batch = httpx.post(f"{server}/mcp", json=[{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
                       headers={**ACCEPT, "Mcp-Session-Id": session_id})
    assert batch.status_code == 400 and batch.json()["error"]["code"] == -32600
    json_only = call(server, session_id, {"jsonrpc": "2.0", "id": 8, "method": "ping"}, Accept="application/json")
    assert json_only.headers["content-type"] == "application/json" and json_only.json()["result"] == {}
