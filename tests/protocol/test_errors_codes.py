"""Malformed protocol parameters get -32602 (or -32600), never -32603, and the session lives on.

Before: `_meta` as a number or an array gave -32603; `subscriptions/listen` with `resourceSubscriptions: 5`
gave -32603; `initialize` accepted `capabilities: "sampling"` (later capability checks became substring
tests); a second `initialize` silently renegotiated the version mid-session. The codes follow JSON-RPC and
the MCP SDKs: -32602 for invalid params, -32600 (Invalid Request) for a lifecycle violation.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.helpers.fault_server import build
from tests.helpers.live_http import MODERN_META, modern_headers, serve
from tests.helpers.stdio_peer import StdioPeer

CALL_ADD = {"name": "add", "arguments": {"a": 1, "b": 2}}


def initialize(version: str = "2025-11-25", **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
            **params,
        },
    }


@pytest.fixture
def peer() -> Iterator[StdioPeer]:
    server = StdioPeer()
    try:
        yield server
    finally:
        server.close()


def error_of(peer: StdioPeer, message: dict[str, Any]) -> dict[str, Any]:
    peer.send(message)
    answer = peer.answer(message["id"])
    assert "error" in answer, answer
    return answer["error"]


@pytest.mark.parametrize("meta", [5, [1, 2], "x", True, {"progressToken": {"nested": 1}}, {"progressToken": [1]}])
def test_meta_that_is_not_an_object_is_invalid_params(peer: StdioPeer, meta: Any) -> None:
    peer.initialize()
    for index, method in enumerate(["tools/call", "ping", "resources/read", "tools/list"]):
        params: dict[str, Any] = {"tools/call": dict(CALL_ADD), "resources/read": {"uri": "fault://unencodable"}}.get(
            method, {}
        )
        error = error_of(peer, {"jsonrpc": "2.0", "id": index, "method": method, "params": {**params, "_meta": meta}})
        assert error["code"] == -32602 and "_meta" in error["message"], error
    assert peer.alive()


def test_listen_with_resource_subscriptions_not_a_list_is_invalid_params(peer: StdioPeer) -> None:
    for index, subscriptions in enumerate([5, "fault://item/a", [1, 2], {"uri": "x"}]):
        error = error_of(peer, {"jsonrpc": "2.0", "id": index, "method": "subscriptions/listen", "params": {
            "_meta": MODERN_META, "notifications": {"resourceSubscriptions": subscriptions}}})
        assert error["code"] == -32602 and "resourceSubscriptions" in error["message"], error
    assert peer.alive()


@pytest.mark.parametrize("field, value", [("capabilities", "sampling"), ("capabilities", ["sampling"]),
                                          ("capabilities", 5), ("clientInfo", "me")])
def test_initialize_with_non_object_capabilities_is_invalid_params(peer: StdioPeer, field: str, value: Any) -> None:
    error = error_of(peer, initialize(**{field: value}))
    assert error["code"] == -32602 and field in error["message"]
    # the session was not initialized by the refused request: a proper initialize still works
    peer.send(initialize())
    assert peer.answer("init")["result"]["protocolVersion"] == "2025-11-25"


def test_capability_checks_are_never_substring_tests(peer: StdioPeer) -> None:
    """`capabilities: "sampling"` once made `"sampling" in capabilities` true; now it is refused outright."""
    assert error_of(peer, initialize(capabilities="elicitation sampling roots"))["code"] == -32602
    peer.send(initialize(capabilities={}))
    assert "result" in peer.answer("init")
    assert peer.alive()


def test_second_initialize_is_refused_and_the_version_stays(peer: StdioPeer) -> None:
    peer.send(initialize("2024-11-05"))
    assert peer.answer("init")["result"]["protocolVersion"] == "2024-11-05"
    again = initialize("2025-11-25")
    again["id"] = "again"
    error = error_of(peer, again)
    assert error["code"] == -32600 and "already initialized" in error["message"]
    # still 2024-11-05: tool titles (2025-06-18+) stay out of tools/list
    peer.send({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
    lookup = [tool for tool in peer.answer("list")["result"]["tools"] if tool["name"] == "lookup"][0]
    assert "title" not in lookup
    assert peer.alive()


def test_prompt_and_completion_params_of_the_wrong_shape_are_invalid_params(peer: StdioPeer) -> None:
    peer.initialize()
    assert error_of(peer, {"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                           "params": {"name": "greet", "arguments": "name"}})["code"] == -32602
    assert error_of(peer, {"jsonrpc": "2.0", "id": 2, "method": "completion/complete", "params": {
        "ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "a"},
        "context": ["x"]}})["code"] == -32602
    assert peer.alive()


@pytest.mark.anyio
@pytest.mark.parametrize("meta", [5, "io.modelcontextprotocol/protocolVersion", [MODERN_META]])
async def test_meta_that_is_not_an_object_over_2026_http_is_invalid_params_not_500(meta: Any) -> None:
    """Found by the HTTP fuzzing: the header check read `_meta` as an object and answered 500."""
    async with serve(build()) as live, httpx.AsyncClient(timeout=10) as client:
        reply = await client.post(live.url, headers=modern_headers("ping"),
                                  json={"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": meta}})
    assert reply.status_code == 400 and reply.json()["error"]["code"] == -32602, reply.text
