"""Session lifecycle: initialize, negotiation, capabilities, server info, and server-to-client requests."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from mcp_kit import Context, MCPError, MCPServer, ToolError
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

HANDSHAKE = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


def tools_only_app(**kwargs: Any) -> MCPServer:
    app = MCPServer("lifecycle", version="2.0.0", **kwargs)

    @app.tool
    def hello(name: str) -> str:
        """Greet."""
        return f"hello {name}"

    return app


# ---------------------------------------------------------------------------- initialize


async def test_requests_before_initialize_get_an_error_but_ping_works() -> None:
    async with connect(tools_only_app(), initialize=False) as client:
        assert await client.request("ping") == {}
        for method, params in (("tools/list", {}), ("tools/call", {"name": "hello", "arguments": {"name": "x"}})):
            with pytest.raises(MCPError) as error:
                await client.request(method, params)
            assert error.value.code not in (0, -32601)
            assert "initialize" in error.value.message
        init = await client.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                   "clientInfo": {"name": "t", "version": "1"}})
        assert init["protocolVersion"] == "2025-06-18"
        await client.notify("notifications/initialized")
        assert [t["name"] for t in await client.list_tools()] == ["hello"]


@pytest.mark.parametrize("version", HANDSHAKE)
async def test_supported_client_version_is_echoed(version: str) -> None:
    async with connect(tools_only_app(), protocol_version=version) as client:
        assert client.initialize_result["protocolVersion"] == version


@pytest.mark.parametrize("version", ["1999-01-01", "2025-01-01", "2026-07-28", "latest"])
async def test_unsupported_client_version_gets_the_newest_handshake_version(version: str) -> None:
    async with connect(tools_only_app(), protocol_version=version) as client:
        assert client.initialize_result["protocolVersion"] == "2025-11-25"


async def test_initialize_without_protocol_version_is_invalid_params() -> None:
    async with connect(tools_only_app(), initialize=False) as client:
        with pytest.raises(MCPError) as error:
            await client.request("initialize", {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
        assert error.value.code == -32602 and "protocolVersion" in error.value.message


async def test_capabilities_are_derived_from_what_is_registered() -> None:
    async with connect(tools_only_app()) as client:
        caps = client.initialize_result["capabilities"]
        assert "tools" in caps
        assert not {"resources", "prompts", "completions"} & set(caps)

    app = MCPServer("full")

    @app.resource("x://a")
    def a() -> str:
        return "a"

    @app.prompt
    def p(topic: str) -> str:
        return topic

    @app.completion("p", "topic")
    def complete(value: str, context: dict[str, str]) -> list[str]:
        return []

    async with connect(app) as client:
        caps = client.initialize_result["capabilities"]
        assert "tools" not in caps
        assert caps["resources"]["subscribe"] is True and caps["resources"]["listChanged"] is True
        assert "prompts" in caps and "completions" in caps and "logging" in caps


@pytest.mark.parametrize(("version", "has_completions"), [("2024-11-05", False), ("2025-03-26", True),
                                                           ("2025-11-25", True)])
async def test_completions_capability_from_2025_03_26(version: str, has_completions: bool) -> None:
    app = tools_only_app()
    app.completion("p", "a")(lambda value, context: [])
    async with connect(app, protocol_version=version) as client:
        assert ("completions" in client.initialize_result["capabilities"]) is has_completions


@pytest.mark.parametrize(("version", "has_title"), [("2024-11-05", False), ("2025-03-26", False),
                                                     ("2025-06-18", True), ("2025-11-25", True)])
async def test_server_info_title_only_from_2025_06_18(version: str, has_title: bool) -> None:
    app = tools_only_app(title="Lifecycle server", instructions="Call hello first.")
    async with connect(app, protocol_version=version) as client:
        info = client.initialize_result["serverInfo"]
        assert info["name"] == "lifecycle" and info["version"] == "2.0.0"
        assert ("title" in info) is has_title
        if has_title:
            assert info["title"] == "Lifecycle server"
        assert client.initialize_result["instructions"] == "Call hello first."


async def test_no_instructions_key_when_none_given() -> None:
    async with connect(tools_only_app()) as client:
        assert "instructions" not in client.initialize_result


async def test_session_id_is_stable_within_a_session_and_differs_between_sessions() -> None:
    app = MCPServer("ids")

    @app.tool
    async def whoami(ctx: Context) -> str:
        return ctx.session_id

    async with connect(app) as one, connect(app) as two:
        first = (await one.call_tool("whoami"))["content"][0]["text"]
        assert (await one.call_tool("whoami"))["content"][0]["text"] == first
        assert (await two.call_tool("whoami"))["content"][0]["text"] != first


async def test_lifespan_state_reaches_the_context() -> None:
    import contextlib

    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: MCPServer) -> Any:
        events.append("start")
        yield {"db": "connected"}
        events.append("stop")

    app = MCPServer("life", lifespan=lifespan)

    @app.tool
    async def state(ctx: Context) -> str:
        return ctx.lifespan_state["db"]

    async with connect(app) as client:
        assert (await client.call_tool("state"))["content"][0]["text"] == "connected"
        assert events == ["start"]
    assert events == ["start", "stop"]


# ---------------------------------------------------------------------------- server-to-client requests


class Confirm(BaseModel):
    ok: bool


def asking_app() -> MCPServer:
    app = MCPServer("asker")

    @app.tool
    async def confirm(ctx: Context, timeout: float = 5) -> dict:
        result = await ctx.elicit("Really?", schema=Confirm, timeout=timeout)
        return {"action": result.action, "content": result.content}

    @app.tool
    async def summarise(ctx: Context, timeout: float = 5) -> str:
        reply = await ctx.sample("Summarise this", max_tokens=50, system_prompt="Be brief", timeout=timeout)
        return f"{reply.model}: {reply.content.text}"

    @app.tool
    async def roots(ctx: Context) -> str:
        return " ".join(str(r.uri) for r in await ctx.list_roots()) or "(none)"

    @app.tool
    async def supports(ctx: Context) -> str:
        return ",".join(c for c in ("sampling", "elicitation", "roots") if ctx.client_supports(c))

    return app


async def test_elicit_with_capability() -> None:
    seen: list[dict[str, Any]] = []

    def on_elicit(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"action": "accept", "content": {"ok": True}}

    async with connect(asking_app(), elicitation=on_elicit) as client:
        result = await client.call_tool("confirm")
        assert result["isError"] is False
        assert result["structuredContent"] == {"action": "accept", "content": {"ok": True}}
        assert seen[0]["message"] == "Really?"
        assert seen[0]["requestedSchema"]["properties"]["ok"]["type"] == "boolean"
        assert (await client.call_tool("supports"))["content"][0]["text"] == "elicitation"


async def test_elicit_on_2025_06_18_does_not_send_mode() -> None:
    seen: list[dict[str, Any]] = []

    def on_elicit(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"action": "decline"}

    async with connect(asking_app(), protocol_version="2025-06-18", elicitation=on_elicit) as client:
        result = await client.call_tool("confirm")
        assert result["structuredContent"]["action"] == "decline"
        assert "mode" not in seen[0]


async def test_sample_with_capability() -> None:
    seen: list[dict[str, Any]] = []

    def on_sample(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "short"},
            "model": "tiny",
            "stopReason": "endTurn",
        }

    async with connect(asking_app(), sampling=on_sample) as client:
        result = await client.call_tool("summarise")
        assert result["content"][0]["text"] == "tiny: short"
        assert seen[0]["maxTokens"] == 50 and seen[0]["systemPrompt"] == "Be brief"
        assert seen[0]["messages"][0]["content"]["text"] == "Summarise this"


async def test_list_roots_with_capability_is_cached_and_refreshed_on_list_changed() -> None:
    roots = [{"uri": "file:///tmp/a", "name": "a"}]
    async with connect(asking_app(), roots=roots) as client:
        assert (await client.call_tool("roots"))["content"][0]["text"] == "file:///tmp/a"
        roots.append({"uri": "file:///tmp/b"})
        assert (await client.call_tool("roots"))["content"][0]["text"] == "file:///tmp/a"  # cached
        await client.notify("notifications/roots/list_changed")
        with anyio.fail_after(5):
            while True:
                listed = (await client.call_tool("roots"))["content"][0]["text"].split()
                if len(listed) == 2:
                    break
                await anyio.sleep(0.01)
        assert listed == ["file:///tmp/a", "file:///tmp/b"]


@pytest.mark.parametrize("tool", ["confirm", "summarise"])
async def test_without_capability_the_tool_gets_a_clear_error(tool: str) -> None:
    async with connect(asking_app()) as client:
        result = await client.call_tool(tool)
        assert result["isError"] is True
        text = result["content"][0]["text"]
        capability = "elicitation" if tool == "confirm" else "sampling"
        assert f"'{capability}' capability" in text
        assert not [n for n in client.notifications if n["method"].startswith(("elicitation", "sampling"))]


async def test_list_roots_without_capability_is_empty() -> None:
    async with connect(asking_app()) as client:
        assert (await client.call_tool("roots"))["content"][0]["text"] == "(none)"
        assert (await client.call_tool("supports"))["content"] == [{"type": "text", "text": ""}]


async def test_client_that_never_answers_times_out_into_a_tool_error() -> None:
    async with connect(asking_app(), elicitation=lambda p: {"action": "cancel"}) as client:
        asked: list[Any] = []

        async def swallow(request: Any) -> None:  # the client declared elicitation but never replies
            asked.append(request)

        client._answer_server_request = swallow  # type: ignore[method-assign]
        with anyio.fail_after(5):
            result = await client.call_tool("confirm", {"timeout": 0.2})
        assert result["isError"] is True
        assert "elicitation/create" in result["content"][0]["text"]
        assert "0.2" in result["content"][0]["text"]
        assert len(asked) == 1
        cancel = await client.wait_notification("notifications/cancelled")
        assert cancel["params"]["requestId"] == asked[0].id
        assert (await client.request("ping")) == {}


async def test_client_error_reply_becomes_a_tool_error() -> None:
    async with connect(asking_app(), sampling=lambda p: {"role": "assistant"}) as client:
        client.handlers.pop("sampling/createMessage")  # the client now answers -32601
        result = await client.call_tool("summarise")
        assert result["isError"] is True
        assert "sampling/createMessage" in result["content"][0]["text"]


def test_tool_error_is_public() -> None:
    assert issubclass(ToolError, Exception)
