"""OAuth over many processes: a session stays bound to its caller, and scopes hold, whichever process a request
lands on.

Two servers (uvicorn in threads) share one real Redis and one authorization server (oidc-provider).
A Streamable HTTP session opened on A remembers its owner in the shared record, so B refuses another
subject with 404; a legacy `/sse` stream held by A gets POSTs relayed from B with the caller's identity,
so A drops another subject's message and checks each tool's scopes as if the POST had landed there.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from mcp_kit import AuditRecord
from mcp_kit.auth import AuthConfig
from tests.auth.test_scopes import INITIALIZE, MCP_HEADERS, Files, answer, build_app, files_as  # noqa: F401  (fixture)
from tests.helpers.redis_support import redis_server, require_redis
from tests.helpers.uvicorn_thread import bound_socket, serve


@dataclass
class Pair:
    a: Files
    b: Files


@pytest.fixture
def pair(files_as: Files) -> Iterator[Pair]:  # noqa: F811
    require_redis()
    with redis_server() as redis, contextlib.ExitStack() as stack:
        sock_a, port_a = bound_socket()
        sock_b, _ = bound_socket()
        resource = f"http://127.0.0.1:{port_a}/mcp"  # one canonical resource, as behind a load balancer
        config = AuthConfig(issuer=files_as.issuer, resource=resource, required_scopes=("files:read",))
        written: list[str] = []
        audit: list[AuditRecord] = []
        sides = []
        for sock in (sock_a, sock_b):
            app = build_app(audit, written).asgi(host="127.0.0.1", auth=config, backend=redis.url)
            url = stack.enter_context(serve(app, sock))
            sides.append(Files(url, resource, files_as, audit, written))
        for side in sides[1:]:
            side.tokens = sides[0].tokens  # one token cache: the same tokens on both sides
        yield Pair(*sides)


def test_a_session_opened_on_a_answers_on_b_only_its_owner(pair: Pair) -> None:
    alice = pair.a.token("alice", "files:read", "files:write")
    mallory = pair.a.token("mallory", "files:read", "files:write")
    session = pair.a.session(alice)
    hijack = pair.b.call(
        mallory, session, "tools/call", {"name": "write_note", "arguments": {"name": "m", "text": "x"}}
    )
    assert hijack.status_code == 404 and pair.a.written == []
    mine = answer(
        pair.b.call(alice, session, "tools/call", {"name": "write_note", "arguments": {"name": "a", "text": "x"}})
    )
    assert mine["result"]["content"][0]["text"] == "wrote a" and pair.a.written == ["a"]


def test_a_legacy_post_relayed_from_b_carries_its_caller(pair: Pair) -> None:
    alice_reader = pair.a.token("alice", "files:read")
    mallory = pair.a.token("mallory", "files:read", "files:write")
    with httpx.Client(timeout=30) as client, client.stream(
            "GET", f"{pair.a.url}/sse", headers={"Accept": "text/event-stream",
                                                  "Authorization": f"Bearer {alice_reader}"}) as sse:
        lines = sse.iter_lines()
        endpoint = next(line[5:].strip() for line in lines if line.startswith("data:"))
        on_b = f"{pair.b.url}{endpoint}"

        def post(token: str, body: dict[str, object]) -> None:
            sent = httpx.post(on_b, json=body, timeout=30, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"})
            assert sent.status_code == 202, sent.text

        def next_message() -> dict[str, object]:
            return next(json.loads(line[5:]) for line in lines if line.startswith("data:") and line[5:].strip())

        post(alice_reader, INITIALIZE)
        assert next_message()["id"] == 1
        post(alice_reader, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        # Another subject's message, relayed to A: dropped there, so it never runs and is never answered.
        post(mallory, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "write_note", "arguments": {"name": "m", "text": "x"}}})
        # Alice's own call of a tool her token lacks the scope for: refused on A, as if posted there.
        post(alice_reader, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                            "params": {"name": "write_note", "arguments": {"name": "a", "text": "x"}}})
        refused = next_message()
        assert refused["id"] == 3, refused  # nothing for id 2 came before it
        assert refused["result"]["isError"] is True and "files:write" in json.dumps(refused["result"])
        post(
            alice_reader,
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}},
        )
        whoami = next_message()
        assert whoami["id"] == 4 and '"subject": "alice"' in json.dumps(
            json.loads(whoami["result"]["content"][0]["text"])
        )
    assert pair.a.written == []
