"""The proxy's behaviour, in memory downstream (`mcp_kit.testing`) and over stdio upstream (a real subprocess):
both eras on both sides, pass-through (meta, progress, logs, subscriptions, list changes, pagination,
cancellation), failures as `UpstreamUnavailable`, restarts, namespaces, and the pipeline in front."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_kit import Call, CallNext, MCPError, MCPServer, Middleware, UpstreamUnavailable, proxy
from mcp_kit._proxy.targets import Target, parse_targets
from mcp_kit.testing import connect
from tests.helpers.support import ROOT

pytestmark = pytest.mark.anyio

KIT = [sys.executable, "-m", "tests.helpers.kit_upstream"]
PROBE = [sys.executable, "-m", "tests.helpers.sdk_probe_server"]
ERAS = ["2025-11-25", "2026-07-28"]


def kit(**env: str) -> dict[str, Any]:
    """A client configuration entry for the kit upstream."""
    return {"command": sys.executable, "args": ["-m", "tests.helpers.kit_upstream"], "cwd": str(ROOT),
            "env": {"PYTHONPATH": str(ROOT), **env}}


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


@pytest.mark.parametrize("era", ERAS)
async def test_every_primitive_passes_through_in_both_eras(era: str) -> None:
    app = proxy(KIT)
    answer = {"action": "accept", "content": {"name": "Ada"}}
    async with connect(app, stateless=era == "2026-07-28", elicitation=lambda params: answer) as client:
        assert client.initialize_result["instructions"] == "mcp_kit behind the tests"
        assert {"add", "ask_name", "shout"} <= {tool["name"] for tool in await client.list_tools()}
        added = await client.call_tool("add", {"a": 4, "b": 5})
        assert text(added) == "9"
        assert ("resultType" in added) is (era == "2026-07-28")  # each era's own answer shape
        assert text(await client.call_tool("ask_name", {})) == "hello Ada"
        assert (await client.read_resource("kit://motd"))[0]["text"] == "mcp_kit says hi"
        prompt = await client.get_prompt("greet", {"who": "Cy"})
        assert prompt["messages"][0]["content"]["text"] == "Say hello to Cy."
        meta = await client.request("tools/call", {"name": "meta_echo", "arguments": {},
                                                   "_meta": {"example.com/trace": "t-1"}})
        seen = json.loads(text(meta))  # _meta passes; the envelope upstream is the proxy's own client's
        assert {k: v for k, v in seen.items() if not k.startswith("io.modelcontextprotocol/")} == {
            "example.com/trace": "t-1"}
        assert seen.get("io.modelcontextprotocol/clientInfo", {"name": "mcp-kit-proxy"})["name"] == "mcp-kit-proxy"


async def test_logs_subscriptions_and_list_changes_reach_the_downstream_session() -> None:
    async with connect(proxy(KIT)) as client:
        await client.set_level("info")
        await client.call_tool("shout", {"words": "heard"})
        note = await client.wait_notification("notifications/message")
        assert note["params"]["data"] == "heard"
        await client.subscribe("kit://motd")
        await client.call_tool("touch")
        updated = await client.wait_notification("notifications/resources/updated")
        assert updated["params"]["uri"] == "kit://motd"
        await client.call_tool("grow")
        await client.wait_notification("notifications/tools/list_changed")
        assert "grown" in {tool["name"] for tool in await client.list_tools()}


async def test_pagination_passes_through() -> None:
    small_pages = [sys.executable, "-c", "import os, runpy; os.environ['KIT_PAGE_SIZE'] = '2'; "
                                         "runpy.run_module('tests.helpers.kit_upstream', run_name='__main__')"]
    async with connect(proxy(small_pages)) as client:
        first = await client.request("tools/list", {})
        assert len(first["tools"]) == 2 and first["nextCursor"]  # the upstream's page, and its cursor
        second = await client.request("tools/list", {"cursor": first["nextCursor"]})
        assert {t["name"] for t in second["tools"]}.isdisjoint({t["name"] for t in first["tools"]})


async def test_cancellation_reaches_the_upstream() -> None:
    async with connect(proxy(PROBE)) as client, anyio.create_task_group() as tg:
        tg.start_soon(client.request, "tools/call", {"name": "wait_forever", "arguments": {},
                                                     "_meta": {"progressToken": "p"}})
        await client.wait_notification("notifications/progress")  # the upstream tool is running
        (pending,) = client._waiting  # the one request in flight: wait_forever's
        await client.cancel(pending, "changed my mind")
        stopped = await client.call_tool("was_stopped", {"within": 10})
        assert text(stopped) == "stopped"
        tg.cancel_scope.cancel()


async def test_an_unreachable_upstream_answers_upstream_unavailable() -> None:
    app = MCPServer.proxy(["/nonexistent/mcp-server"], connect_timeout=0.5)
    async with connect(app) as client:
        result = await client.call_tool("anything", {})
        assert result["isError"] is True
        assert "server behind this proxy" in text(result) and "cannot be reached" in text(result)
        with pytest.raises(MCPError) as caught:
            await client.list_tools()
        assert caught.value.code == -31001 and caught.value.data["retryable"] is True
    assert issubclass(UpstreamUnavailable, MCPError)


async def test_a_dying_stdio_upstream_is_restarted_and_its_call_answered() -> None:
    async with connect(proxy(KIT)) as client:
        before = text(await client.call_tool("pid"))
        with anyio.fail_after(20):
            died = await client.call_tool("die")  # the upstream exits mid-call: answered, not left hanging
        assert died["isError"] is True and "went away" in text(died)
        with anyio.fail_after(20):
            after = text(await client.call_tool("pid"))  # waits for the restart (backoff) and is served
        assert after != before


async def test_namespaces_from_a_client_config(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"left": kit(), "right": kit(KIT_PAGE_SIZE="1")}}))
    app = MCPServer.proxy(str(path), page_size=3)
    async with connect(app) as client:
        names = {tool["name"] for tool in await client.list_tools()}  # merged, paginated by the proxy (3)
        assert {"left_add", "right_add", "left_pid", "right_pid"} <= names
        assert text(await client.call_tool("right_add", {"a": 1, "b": 1})) == "2"
        uris = {resource["uri"] for resource in await client.list_resources()}
        assert uris == {"left+kit://motd", "right+kit://motd"}
        assert (await client.read_resource("left+kit://motd"))[0]["uri"] == "left+kit://motd"
        assert {p["name"] for p in await client.list_prompts()} == {"left_greet", "right_greet"}
        with pytest.raises(MCPError, match="start with a server's name"):
            await client.call_tool("add", {"a": 1, "b": 1})


async def test_the_pipeline_runs_in_front_of_proxied_calls() -> None:
    seen: list[str] = []

    class Record(Middleware):
        async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
            seen.append(call.params["name"])
            return await call_next(call)

    app = proxy(KIT, middleware=[Record()])
    async with connect(app) as client:
        assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "3"
    assert seen == ["add"]


def test_targets() -> None:
    assert parse_targets("https://example.com/mcp") == {None: Target(url="https://example.com/mcp")}
    assert parse_targets(["npx", "-y", "server"]) == {None: Target(command=("npx", "-y", "server"))}
    assert parse_targets("uvx some-server") == {None: Target(command="uvx some-server")}
    config = parse_targets({"mcpServers": {"a": {"command": "x", "args": ["1"]}, "b": {"url": "http://h/mcp"}}})
    assert config["a"].command == ("x", "1") and config["b"].url == "http://h/mcp"
    with pytest.raises(ValueError, match="cannot be a namespace"):
        parse_targets({"mcpServers": {"a_b": {"command": "x"}}})
    with pytest.raises(ValueError, match="needs a 'command' or a 'url'"):
        parse_targets({"mcpServers": {"a": {}}})
