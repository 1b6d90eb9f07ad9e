"""End to end over HTTP: the official SDK clients against a real uvicorn on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers.support import http_server
from tests.interop.test_sdk_stdio import Inbox

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    with http_server(["examples/demo_server.py"]) as base:
        yield base


async def exercise(session: ClientSession, inbox: Inbox) -> None:
    """The same walk through the features for every transport."""
    init = await session.initialize()
    assert init.server_info.name == "demo"
    names = {t.name for t in (await session.list_tools()).tools}
    assert {"add", "echo", "slow"} <= names
    result = await session.call_tool("add", {"a": 1.5, "b": 2})
    assert result.structured_content == {"total": 3.5, "terms": 2}
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    slow = await session.call_tool("slow", {"seconds": 0.2}, progress_callback=on_progress)
    assert slow.content[0].text == "slept 0.2 s"
    assert progress == [1, 2]
    bad = await session.call_tool("echo", {})
    assert bad.is_error and "'text' is required" in bad.content[0].text
    read = await session.read_resource("note://welcome")
    assert read.contents[0].text
    await session.subscribe_resource("note://todo")
    await session.call_tool("touch_note", {"name": "todo", "text": "via http"})
    note = await inbox.wait_for(types.ResourceUpdatedNotification)
    assert str(note.params.uri) == "note://todo"
    prompt = await session.get_prompt("summarise", {"name": "todo"})
    assert "via http" in prompt.messages[0].content.text


async def test_streamable_http_with_the_sdk_client(demo_url: str) -> None:
    inbox = Inbox()
    async with streamable_http_client(f"{demo_url}/mcp") as (read, write), \
            ClientSession(read, write, message_handler=inbox) as session:
        await exercise(session, inbox)


async def test_legacy_sse_with_the_sdk_client(demo_url: str) -> None:
    inbox = Inbox()
    async with (
        sse_client(f"{demo_url}/sse") as (read, write),
        ClientSession(read, write, message_handler=inbox) as session,
    ):
        await exercise(session, inbox)


async def test_fifty_concurrent_sessions_each_make_calls(demo_url: str) -> None:
    answers: list[str] = []

    async def one(index: int) -> None:
        async with streamable_http_client(f"{demo_url}/mcp") as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for call in range(3):
                result = await session.call_tool("echo", {"text": f"{index}-{call}"})
                answers.append(result.content[0].text)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for index in range(50):
                tg.start_soon(one, index)
    assert sorted(answers) == sorted(f"{i}-{c}" for i in range(50) for c in range(3))


