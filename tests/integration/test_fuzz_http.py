"""Fault suite, Streamable HTTP: any sequence of messages, valid or not, POSTed concurrently to a real uvicorn
(a server subprocess on 127.0.0.1, port 0), gets every request answered exactly once on its own POST with a
valid JSON-RPC response or the documented error, in JSON and SSE replies, in a session and stateless
(2026-07-28); the session stays alive.

Property-based (hypothesis, derandomized so every run sends the same sequences; example counts bounded).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.fuzz_messages import FUZZ, Plan, Sent, check_answer, check_notification, plans
from tests.helpers.live_http import ACCEPT, MODERN_META, server_process, sse_messages

_examples = itertools.count()
_HEADER_VALUE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class Peer:
    """One HTTP client with one initialized session."""

    def __init__(self, base: str) -> None:
        self.url = f"{base}/mcp"
        self.client = httpx.Client(timeout=15, limits=httpx.Limits(max_connections=32))
        init = self.client.post(
            self.url,
            headers=ACCEPT,
            json={
                "jsonrpc": "2.0",
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "fuzz", "version": "1"},
                },
            },
        )
        assert init.status_code == 200, init.text
        self.session = {"Mcp-Session-Id": init.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        self.client.post(self.url, headers={**ACCEPT, **self.session},
                         json={"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, item: Sent, accept: str, stateless: bool) -> httpx.Response:
        headers = {"Content-Type": "application/json", "Accept": accept}
        body = item.line()
        if stateless and isinstance(item.wire, dict) and "method" in item.wire and "id" in item.wire:
            wire = json.loads(body)
            params = wire.get("params") if isinstance(wire.get("params"), dict) else {}
            params.setdefault("_meta", MODERN_META)
            wire["params"] = params
            body = json.dumps(wire).encode()
            headers.update({"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": _header(wire["method"])})
            if isinstance(wire["method"], str) and wire["method"] in NAMED_BY:
                headers["Mcp-Name"] = _header(params.get(NAMED_BY[wire["method"]], ""))
        else:
            headers.update(self.session)
        return self.client.post(self.url, content=body, headers=headers)


def _header(value: Any) -> str:
    """The value as an HTTP header can carry it (what a client could send); anything else mismatches on purpose."""
    text = str(value)
    return text if _HEADER_VALUE.fullmatch(text) else "not-representable"


@pytest.fixture(scope="module")
def peer() -> Iterator[Peer]:
    with server_process(["-m", "tests.helpers.fault_server"]) as base:
        http = Peer(base)
        try:
            yield http
        finally:
            http.client.close()


def messages_of(reply: httpx.Response) -> list[Any]:
    kind = reply.headers.get("content-type", "")
    if kind.startswith("application/json"):
        body = reply.json()
        return body if isinstance(body, list) else [body]
    if kind.startswith("text/event-stream"):
        return sse_messages(reply.text)
    assert reply.status_code in (202, 204) and not reply.content, (reply.status_code, reply.text[:300])
    return []


@FUZZ
@given(data=st.data(), accept=st.sampled_from(["application/json", "application/json, text/event-stream"]),
       stateless=st.booleans())
def test_any_message_sequence_over_http_is_answered_exactly_once(peer: Peer, data: st.DataObject, accept: str,
                                                                 stateless: bool) -> None:
    plan: Plan = data.draw(plans(f"h{next(_examples)}", max_size=6))
    with ThreadPoolExecutor(max_workers=8) as pool:  # concurrently: duplicate ids meet while in flight
        replies = list(pool.map(lambda item: peer.post(item, accept, stateless), plan.items))
    for item, reply in zip(plan.items, replies, strict=True):
        assert reply.status_code in (200, 202, 400, 404), (item.wire, reply.status_code, reply.text[:300])
        messages = messages_of(reply)
        answers = [m for m in messages if isinstance(m, dict) and "method" not in m]
        for message in messages:
            if isinstance(message, dict) and "method" in message:
                check_notification(message)
        for answer in answers:
            check_answer(answer, plan)
        if item.answer_id is not None:  # even a cancelled request's POST ends with one answer (-32800 if cancelled)
            mine = [a for a in answers if json.dumps(a.get("id")) == json.dumps(item.answer_id)]
            assert len(mine) == 1 and len(answers) == 1, (item.wire, reply.status_code, messages)
        elif item.null_errors:
            assert [a["id"] for a in answers] == [None] * item.null_errors, (item.wire, messages)
        else:
            assert reply.status_code == 202 and not answers, (item.wire, reply.status_code, messages)


def test_the_session_is_alive_after_the_fuzzing(peer: Peer) -> None:
    reply = peer.client.post(peer.url, headers={**ACCEPT, **peer.session, "Accept": "application/json"},
                             json={"jsonrpc": "2.0", "id": "alive", "method": "tools/call",
                                   "params": {"name": "add", "arguments": {"a": 2, "b": 3}}})
    assert reply.status_code == 200 and reply.json()["result"]["content"][0]["text"] == "5"
