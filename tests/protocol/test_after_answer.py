"""A change announced while a request is handled reaches the subscribers after that request's answer.

`after_answer` defers a call to the moment the answer was handed to the writer; the application's
`notify_resource_updated` uses it, so a tool that tells a thousand subscribers gets its own answer first.
Fan-out itself delivers to every subscriber, each update in the order it was published.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_kit import MCPServer
from mcp_kit._eras.session import Session
from mcp_kit._protocol.dispatcher import Dispatcher, after_answer
from mcp_kit._protocol.jsonrpc import encode_message

pytestmark = pytest.mark.anyio

URI = "bench://counter"
INIT = json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).encode()


class Log:
    """What happened, in order: answers the writer got, and updates subscribers got."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, Any]] = []

    async def send(self, message: Any, related_to: Any = None) -> None:
        wire = json.loads(encode_message(message))
        if "id" in wire and "method" not in wire:
            self.entries.append(("answer", wire["id"]))


class Subscriber:
    def __init__(self, log: Log, name: int) -> None:
        self.log, self.name = log, name

    def resource_updated(self, uri: str) -> None:
        self.log.entries.append(("updated", (self.name, uri)))

    async def deliver_update(self, uri: str) -> None:
        self.resource_updated(uri)


def build() -> MCPServer:
    app = MCPServer("after-answer")

    @app.resource("bench://counter/{n}")
    def counter(n: str) -> str:
        return n

    @app.tool
    async def bump(times: int = 1) -> str:
        """Announce a change of each of `times` resources, in order."""
        for n in range(times):
            app.notify_resource_updated(f"{URI}/{n}")
        return "ok"

    return app


async def served(subscribers: int, times: int = 1) -> Log:
    app, log = build(), Log()
    async with app.running(), Dispatcher(log) as dispatcher:
        dispatcher.attach(Session(app, dispatcher))
        for name in range(subscribers):
            app.hub.subscribe_all([f"{URI}/{n}" for n in range(times)], Subscriber(log, name))
        await dispatcher.feed_frame(INIT)
        await dispatcher.feed_frame(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                                                "params": {"name": "bump", "arguments": {"times": times}}}).encode())
        with anyio.fail_after(10):
            while sum(1 for kind, _ in log.entries if kind == "updated") < subscribers * times:
                await anyio.lowlevel.checkpoint()
    return log


@pytest.mark.parametrize("subscribers", [1, 3, 200])
async def test_the_triggering_call_is_answered_before_any_subscriber_hears_of_the_change(subscribers: int) -> None:
    log = await served(subscribers)
    answered = log.entries.index(("answer", 7))
    first_update = next(i for i, (kind, _) in enumerate(log.entries) if kind == "updated")
    assert answered < first_update


async def test_fan_out_reaches_every_subscriber_with_its_updates_in_the_order_they_were_published() -> None:
    log = await served(300, times=3)
    heard: dict[int, list[str]] = {}
    for kind, value in log.entries:
        if kind == "updated":
            heard.setdefault(value[0], []).append(value[1])
    assert heard == {name: [f"{URI}/0", f"{URI}/1", f"{URI}/2"] for name in range(300)}


async def test_outside_a_request_nothing_is_deferred() -> None:
    ran: list[int] = []
    assert after_answer(lambda: ran.append(1)) is False
    assert ran == []


async def test_a_handler_still_running_does_not_hold_its_announcements_back_until_it_ends() -> None:
    app, log = build(), Log()
    heard = anyio.Event()

    class Hearing(Subscriber):
        def resource_updated(self, uri: str) -> None:
            super().resource_updated(uri)
            heard.set()

    @app.tool
    async def announce_then_wait() -> str:
        """Announce a change, then run until a subscriber has heard of it."""
        app.notify_resource_updated(f"{URI}/0")
        await heard.wait()
        return "heard"

    async with app.running(), Dispatcher(log) as dispatcher:
        dispatcher.attach(Session(app, dispatcher))
        app.hub.subscribe(f"{URI}/0", Hearing(log, 0))
        await dispatcher.feed_frame(INIT)
        await dispatcher.feed_frame(json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                                                "params": {"name": "announce_then_wait", "arguments": {}}}).encode())
        with anyio.fail_after(10):
            while ("answer", 8) not in log.entries:
                await anyio.lowlevel.checkpoint()
    assert log.entries.index(("updated", (0, f"{URI}/0"))) < log.entries.index(("answer", 8))
