"""A `notifications/cancelled` whose `requestId` is not an id is ignored (and logged), never fatal.

Before: `{"requestId": [1]}` raised `TypeError: unhashable type` in the dispatcher; the stdio server exited 1
and HTTP answered 500.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.helpers.fault_server import build
from tests.helpers.live_http import ACCEPT, serve
from tests.helpers.stdio_peer import StdioPeer

NOT_IDS: list[Any] = [[1], {"id": 1}, None, 1.5, True, [[]]]


def cancel(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id, "reason": "x"}}


@pytest.fixture
def peer() -> Iterator[StdioPeer]:
    server = StdioPeer()
    try:
        yield server
    finally:
        server.close()


def test_cancel_with_an_unhashable_request_id_does_not_kill_the_stdio_server(peer: StdioPeer) -> None:
    peer.initialize()
    for not_an_id in NOT_IDS:
        peer.send(cancel(not_an_id))
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})  # no requestId at all
    assert peer.alive()
    assert peer.proc.poll() is None
    peer.wait_stderr("ignoring notifications/cancelled")  # logged before the ping was answered; read by a thread
    # a well-formed cancel still cancels: the tool itself sees its cancellation, the call is never answered,
    # and the session goes on
    peer.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "forever", "arguments": {"key": "seven", "report": True}, "_meta": {"progressToken": "p7"}}})
    assert next_progress(peer)["params"]["progressToken"] == "p7"  # the tool is running
    assert was_cancelled(peer, "seven", within=0) == "running"
    peer.send(cancel(7))
    assert was_cancelled(peer, "seven", within=10) == "cancelled"
    assert peer.alive()  # answered after the cancelled call's task ended: an answer to 7 would be here by now
    assert not [m for m in peer.backlog if isinstance(m, dict) and m.get("id") == 7]


def next_progress(peer: StdioPeer, timeout: float = 10.0) -> dict[str, Any]:
    """The next progress notification (other messages are kept in the peer's backlog)."""
    deadline = time.monotonic() + timeout
    while True:
        message = peer.next(deadline)
        if isinstance(message, dict) and message.get("method") == "notifications/progress":
            return message
        peer.backlog.append(message)


def was_cancelled(peer: StdioPeer, key: str, within: float) -> str:
    """What the fault server's held call `key` has seen: 'running' or 'cancelled'."""
    request_id = f"asked-{key}-{within}"
    peer.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
               "params": {"name": "was_cancelled", "arguments": {"key": key, "within": within}}})
    return str(peer.answer(request_id, timeout=within + 10)["result"]["content"][0]["text"])


@pytest.mark.anyio
async def test_cancel_with_an_unhashable_request_id_over_http_is_accepted_not_500() -> None:
    async with serve(build()) as live, httpx.AsyncClient(timeout=10) as client:
        init = await client.post(
            live.url,
            headers=ACCEPT,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
        )
        headers = {**ACCEPT, "Mcp-Session-Id": init.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        for not_an_id in NOT_IDS:
            reply = await client.post(live.url, headers=headers, json=cancel(not_an_id))
            assert reply.status_code == 202, reply.text
        ping = await client.post(live.url, headers={**headers, "Accept": "application/json"},
                                 json={"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert ping.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
