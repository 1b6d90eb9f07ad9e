"""The handshake-era session as one plain record: it round-trips through JSON, and a new connection
serves the session from it (what a shared backend needs to serve a session from another process)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest

from mcp_kit import Context, MCPServer
from mcp_kit._eras.record import SessionState
from mcp_kit._eras.session import Session
from mcp_kit._protocol.dispatcher import Dispatcher
from mcp_kit._protocol.jsonrpc import decode_message, encode_message
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio


class Recorder:
    """A MessageWriter keeping every message the server sends, as wire JSON."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self._changed = anyio.Event()

    async def send(self, message: Any, related_to: Any = None) -> None:
        self.messages.append(json.loads(encode_message(message)))
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        with anyio.fail_after(5):
            while True:
                for message in self.messages:
                    if predicate(message):
                        return message
                await self._changed.wait()


def notes_app() -> MCPServer:
    app = MCPServer("notes")

    @app.tool(title="Shout")
    async def shout(text: str, ctx: Context) -> str:
        """Upper-case a text, logging at debug and at warning."""
        await ctx.debug("debug detail")
        await ctx.warning("about to shout")
        return text.upper()

    @app.resource("note://{name}")
    def note(name: str) -> str:
        return name

    return app


@contextlib.asynccontextmanager
async def served(app: MCPServer, state: SessionState | None) -> AsyncIterator[tuple[Dispatcher, Session, Recorder]]:
    """A session over a raw dispatcher, as a transport builds it."""
    out = Recorder()
    async with Dispatcher(out) as dispatcher:
        session = Session(app, dispatcher, state)
        dispatcher.attach(session)
        yield dispatcher, session, out


async def test_the_session_record_round_trips_through_json() -> None:
    app = notes_app()
    async with connect(app, protocol_version="2025-06-18", roots=[]) as client:
        await client.request("logging/setLevel", {"level": "warning"})
        await client.request("resources/subscribe", {"uri": "note://a"})
        state = client.session.state
        assert state.protocol_version == "2025-06-18" and state.initialized and state.log_level == "warning"
        assert state.subscriptions == {"note://a"} and state.client_info["name"] == "mcp_kit.testing"
        assert "roots" in state.client_capabilities
        restored = SessionState.from_dict(json.loads(json.dumps(state.to_dict())))
        assert restored == state


async def test_a_new_connection_serves_a_recorded_session_without_initialize() -> None:
    app = notes_app()
    async with app.running():
        async with connect(app, protocol_version="2024-11-05") as client:
            await client.request("logging/setLevel", {"level": "warning"})
            await client.request("resources/subscribe", {"uri": "note://a"})
            record = json.dumps(client.session.state.to_dict())
        assert not app.hub.subscribers("note://a")  # the first connection is gone, and its subscription with it

        async with served(app, SessionState.from_dict(json.loads(record))) as (dispatcher, session, out):
            assert app.hub.subscribers("note://a") == 1  # the restored session listens again
            await dispatcher.feed(decode_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'))
            listed = await out.wait_for(lambda m: m.get("id") == 1)
            assert "title" not in listed["result"]["tools"][0]  # shaped for the recorded 2024-11-05
            await dispatcher.feed(decode_message(
                b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shout","arguments":{"text":"hi"}}}'))
            answer = await out.wait_for(lambda m: m.get("id") == 2)
            assert answer["result"]["content"][0]["text"] == "HI"
            logged = [m["params"]["level"] for m in out.messages if m.get("method") == "notifications/message"]
            assert logged == ["warning"]  # the recorded log level holds: debug was not sent
            app.notify_resource_updated("note://a")
            updated = await out.wait_for(lambda m: m.get("method") == "notifications/resources/updated")
            assert updated["params"] == {"uri": "note://a"} and session.session_id == json.loads(record)["session_id"]


async def test_a_new_session_starts_uninitialized() -> None:
    app = notes_app()
    async with app.running(), served(app, None) as (dispatcher, session, out):
        await dispatcher.feed(decode_message(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'))
        refused = await out.wait_for(lambda m: m.get("id") == 1)
        assert refused["error"]["code"] == -32600 and "before initialize" in refused["error"]["message"]
        assert session.state == SessionState(session_id=session.session_id)


@pytest.mark.parametrize("data, why", [
    ({}, "needs 'session_id'"),
    ({"session_id": 7}, "session_id must be a str"),
    ({"session_id": "s", "subscriptions": "note://a"}, "subscriptions must be a list"),
    ({"session_id": "s", "subscriptions": [1]}, "URIs"),
    ({"session_id": "s", "initialized": "yes"}, "initialized must be a bool"),
])
def test_from_dict_refuses_what_is_not_a_record(data: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        SessionState.from_dict(data)


async def test_the_transports_principal_reaches_the_context() -> None:
    app = MCPServer("who")
    seen: list[object | None] = []

    @app.tool
    async def whoami(ctx: Context) -> str:
        """Report who called."""
        seen.append(ctx.principal)
        return "ok"

    caller = object()
    async with app.running(), served(app, None) as (dispatcher, _, out):
        await dispatcher.feed(
            decode_message(
                b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}'
            )
        )
        await out.wait_for(lambda m: m.get("id") == 1)
        call = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"whoami","arguments":{}}}'
        await dispatcher.feed(decode_message(call % 2), principal=caller)
        await dispatcher.feed(decode_message(call % 3))
        await out.wait_for(lambda m: m.get("id") == 2)
        await out.wait_for(lambda m: m.get("id") == 3)
    assert seen[0] is caller and seen[1] is None
