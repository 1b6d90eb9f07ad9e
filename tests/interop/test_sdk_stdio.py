"""End to end: the official MCP SDK client launches examples/demo_server.py as a real subprocess."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError as SDKError

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.anyio


class Inbox:
    """Collects server notifications delivered to the SDK's message handler."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        self.items.append(message)
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for(self, kind: type, timeout: float = 5.0) -> Any:
        with anyio.fail_after(timeout):
            while True:
                for item in self.items:
                    if isinstance(item, kind):
                        return item
                await self.changed.wait()


@pytest.fixture(params=["loop", "threads"])
def stdio_mode(request: pytest.FixtureRequest) -> str:
    """The SDK client drives both stdio paths of the server (MCP_KIT_STDIO_MODE)."""
    return str(request.param)


def demo_params(stdio_mode: str = "auto") -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "examples" / "demo_server.py")],
        cwd=str(ROOT),
        env={"MCP_KIT_STDIO_MODE": stdio_mode},
    )


async def test_sdk_client_uses_every_feature_over_stdio(stdio_mode: str) -> None:
    inbox = Inbox()
    async with (
        stdio_client(demo_params(stdio_mode)) as (read, write),
        ClientSession(read, write, message_handler=inbox) as session,
    ):
        init = await session.initialize()
        assert init.server_info.name == "demo"
        assert init.capabilities.tools is not None and init.capabilities.resources.subscribe is True

        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert {"add", "echo", "slow", "fail", "touch_note"} <= set(tools)
        assert tools["add"].input_schema["required"] == ["a"]
        assert tools["add"].annotations.read_only_hint is True

        resources = (await session.list_resources()).resources
        assert [str(r.uri) for r in resources] == ["note://index", "data://blob"]
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["note://{name}"]
        prompts = (await session.list_prompts()).prompts
        assert prompts[0].name == "summarise" and prompts[0].arguments[0].required is True

        result = await session.call_tool("add", {"a": 2, "b": 3})
        assert result.is_error is False and result.structured_content == {"total": 5.0, "terms": 2}

        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        slow = await session.call_tool("slow", {"seconds": 0.3}, progress_callback=on_progress)
        assert slow.content[0].text == "slept 0.3 s"
        assert progress == [1, 2, 3]

        bad = await session.call_tool("add", {"a": "seven"})
        assert bad.is_error is True
        assert "'a'" in bad.content[0].text and "given: 'seven'" in bad.content[0].text

        text = await session.read_resource("note://welcome")
        assert text.contents[0].text == "Hello from mcp_kit."
        blob = await session.read_resource("data://blob")
        assert blob.contents[0].blob == "AAEC/w=="
        with pytest.raises(SDKError) as missing:
            await session.read_resource("note://nope")
        assert missing.value.error.code == -32002

        await session.subscribe_resource("note://todo")
        await session.call_tool("touch_note", {"name": "todo", "text": "updated"})
        updated = await inbox.wait_for(types.ResourceUpdatedNotification)
        assert str(updated.params.uri) == "note://todo"
        await session.unsubscribe_resource("note://todo")
        inbox.items.clear()
        await session.call_tool("touch_note", {"name": "todo", "text": "again"})
        await session.send_ping()
        assert not [m for m in inbox.items if isinstance(m, types.ResourceUpdatedNotification)]

        prompt = await session.get_prompt("summarise", {"name": "welcome", "tone": "cheerful"})
        assert "cheerful" in prompt.messages[0].content.text
        with pytest.raises(SDKError) as no_args:
            await session.get_prompt("summarise", {})
        assert no_args.value.error.code == -32602 and "name" in no_args.value.error.message

        completion = await session.complete(
            types.ResourceTemplateReference(uri="note://{name}"), {"name": "name", "value": "t"}
        )
        assert completion.completion.values == ["todo"]

        await session.set_logging_level("warning")
        inbox.items.clear()
        await session.call_tool("touch_note", {"name": "welcome", "text": "hi"})  # logs at info: filtered out
        await session.send_ping()
        assert not [m for m in inbox.items if isinstance(m, types.LoggingMessageNotification)]
        await session.set_logging_level("debug")
        await session.call_tool("touch_note", {"name": "welcome", "text": "hi"})
        log = await inbox.wait_for(types.LoggingMessageNotification)
        assert log.params.level == "info" and "welcome" in str(log.params.data)


async def test_sdk_client_runs_calls_concurrently(stdio_mode: str) -> None:
    """Three calls each wait until all three are running on the server: none returns unless they run at once.

    (Cancellation through the SDK, checked on the server's side, is in test_sdk_cancel.py.)"""
    params = StdioServerParameters(command=sys.executable, args=["-m", "tests.helpers.sdk_probe_server"], cwd=str(ROOT),
                                   env={"MCP_KIT_STDIO_MODE": stdio_mode})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        results: list[Any] = []

        async def one() -> None:
            results.append(await session.call_tool("meet", {"at": "three", "parties": 3, "within": 20}))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(one)
        assert [(r.is_error, r.content[0].text) for r in results] == [(False, "met 3")] * 3
