"""The middleware seam, in memory: one chain around every method, in both eras, for retries and task runs.

A middleware written against `mcp_kit.Middleware` sees each request as a `Call`, may refuse it, answer
it early, rewrite its params and its result; `on_request` wraps the specific hook; middleware apply in
order, the first outermost; the chain is composed once and is absent when there is no middleware.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_kit import Call, CallNext, Context, MCPError, MCPServer, Middleware, ToolCrashed, ToolError
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

STATELESS = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
TASKS = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}


class Recorder(Middleware):
    """Sees everything; refuses tools named `forbidden`; doubles `a`; stamps tool results."""

    def __init__(self, log: list[tuple[Any, ...]]) -> None:
        self.log = log

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        self.log.append(("request", call.method, call.stateless, call.in_task))
        return await call_next(call)

    async def on_notification(self, call: Call, call_next: CallNext) -> Any:
        self.log.append(("notification", call.method))
        return await call_next(call)

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        self.log.append(("call_tool", call.name, dict(call.arguments), call.in_task))
        if call.name == "forbidden":
            raise ToolError("refused by the middleware")
        if "a" in call.arguments:
            call = call.replace(params={**call.params, "arguments": {**call.arguments, "a": call.arguments["a"] * 2}})
        result = await call_next(call)
        if isinstance(result, dict) and "content" in result:
            result = {**result, "content": [*result["content"], {"type": "text", "text": "stamped"}]}
        return result

    async def on_read_resource(self, call: Call, call_next: CallNext) -> Any:
        self.log.append(("read", call.uri))
        if call.uri == "note://secret":
            raise MCPError(-32602, "refused by the middleware")
        return await call_next(call)

    async def on_get_prompt(self, call: Call, call_next: CallNext) -> Any:
        self.log.append(("prompt", call.name))
        result = await call_next(call.replace(params={**call.params, "arguments": {"topic": "rewritten"}}))
        return result

    async def on_list_tools(self, call: Call, call_next: CallNext) -> Any:
        self.log.append(("list_tools",))
        result = await call_next(call)
        return {**result, "tools": [t for t in result["tools"] if t["name"] != "hidden"]}

    async def on_list_resources(self, call: Call, call_next: CallNext) -> Any:
        self.log.append(("list_resources",))
        return await call_next(call)

    async def on_list_resource_templates(self, call: Call, call_next: CallNext) -> Any:
        self.log.append(("list_templates",))
        return await call_next(call)

    async def on_list_prompts(self, call: Call, call_next: CallNext) -> Any:
        self.log.append(("list_prompts",))
        return {"prompts": []}  # answered early

    async def on_complete(self, call: Call, call_next: CallNext) -> Any:
        self.log.append(("complete",))
        return await call_next(call)

    async def on_initialize(self, call: Call, call_next: CallNext) -> Any:
        self.log.append(("initialize", call.params.get("protocolVersion")))
        result = await call_next(call)
        return {**result, "instructions": "from the middleware"}


def build(log: list[tuple[Any, ...]]) -> MCPServer:
    app = MCPServer("piped", middleware=[Recorder(log)])

    @app.tool
    async def add(a: int, b: int) -> int:
        return a + b

    @app.tool
    async def forbidden() -> str:
        return "never"

    @app.tool
    async def hidden() -> str:
        return "h"

    @app.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"n": {"type": "string"}}}, key="n")
        return f"hello {answer.content['n'] if answer.content else '?'}"

    @app.tool(task="optional")
    async def job(a: int) -> int:
        return a + 1

    @app.resource("note://hello")
    def hello() -> str:
        return "hi"

    @app.resource("note://secret")
    def secret() -> str:
        return "s"

    @app.resource("note://item/{key}")
    def item(key: str) -> str:
        return key

    @app.prompt
    def brief(topic: str) -> str:
        return f"about {topic}"

    @app.completion("brief", "topic")
    def topics(value: str, context: dict[str, str]) -> list[str]:
        return ["alpha"]

    return app


async def test_every_method_of_the_handshake_era_passes_the_chain() -> None:
    log: list[tuple[Any, ...]] = []
    async with connect(build(log)) as client:
        assert client.initialize_result["instructions"] == "from the middleware"
        assert [t["name"] for t in await client.list_tools()] == ["add", "forbidden", "ask", "job"]
        result = await client.call_tool("add", {"a": 2, "b": 1})
        assert [b["text"] for b in result["content"]] == ["5", "stamped"]  # a doubled, result stamped
        refused = await client.call_tool("forbidden", {})
        assert refused["isError"] is True and refused["content"][0]["text"] == "refused by the middleware"
        assert (await client.read_resource("note://hello"))[0]["text"] == "hi"
        with pytest.raises(MCPError, match="refused by the middleware"):
            await client.read_resource("note://secret")
        assert await client.list_resources()
        assert await client.list_resource_templates()
        assert await client.list_prompts() == []
        prompt = await client.get_prompt("brief", {"topic": "x"})
        assert prompt["messages"][0]["content"]["text"] == "about rewritten"
        assert (await client.complete({"type": "ref/prompt", "name": "brief"}, {"name": "topic", "value": "a"}))
        await client.request("ping")
        await client.set_level("info")
    requests = [entry[1] for entry in log if entry[0] == "request"]
    assert requests == ["initialize", "tools/list", "tools/call", "tools/call", "resources/read", "resources/read",
                        "resources/list", "resources/templates/list", "prompts/list", "prompts/get",
                        "completion/complete", "ping", "logging/setLevel"]
    assert ("notification", "notifications/initialized") in log
    assert ("call_tool", "add", {"a": 2, "b": 1}, False) in log
    assert {"initialize", "list_tools", "read", "list_resources", "list_templates", "list_prompts", "prompt",
            "complete"} <= {entry[0] for entry in log}


async def test_stateless_requests_and_an_input_rounds_retry_pass_the_chain() -> None:
    log: list[tuple[Any, ...]] = []
    async with connect(build(log), initialize=False) as client:
        listed = await client.request("tools/list", {"_meta": STATELESS})
        assert "hidden" not in [t["name"] for t in listed["tools"]] and listed["resultType"] == "complete"
        added = await client.request("tools/call", {"name": "add", "arguments": {"a": 5, "b": 0}, "_meta": STATELESS})
        assert [b["text"] for b in added["content"]] == ["10", "stamped"] and added["resultType"] == "complete"
        first = await client.request("tools/call", {"name": "ask", "arguments": {}, "_meta": STATELESS})
        assert first["resultType"] == "input_required"
        done = await client.request("tools/call", {"name": "ask", "arguments": {}, "_meta": STATELESS,
                                                   "requestState": first["requestState"],
                                                   "inputResponses": {"n": {"action": "accept",
                                                                            "content": {"n": "Ada"}}}})
        assert [b["text"] for b in done["content"]] == ["hello Ada", "stamped"]
        with pytest.raises(MCPError, match="refused by the middleware"):
            await client.request("resources/read", {"uri": "note://secret", "_meta": STATELESS})
        await client.request("server/discover", {"_meta": STATELESS})
    assert [entry for entry in log if entry[0] == "call_tool"] == [
        ("call_tool", "add", {"a": 5, "b": 0}, False), ("call_tool", "ask", {}, False),
        ("call_tool", "ask", {}, False)]
    assert [entry[1:3] for entry in log if entry[0] == "request"] == [
        ("tools/list", True), ("tools/call", True), ("tools/call", True), ("tools/call", True),
        ("resources/read", True), ("server/discover", True)]


async def test_a_tasks_run_passes_the_chain_again_inside_the_task() -> None:
    log: list[tuple[Any, ...]] = []
    app = build(log)
    async with connect(app, initialize=False) as client:
        created = await client.request("tools/call", {"name": "job", "arguments": {"a": 20}, "_meta": TASKS})
        assert created["resultType"] == "task"
        task_id = created["taskId"]
        with anyio.fail_after(10):
            while True:
                got = await client.request("tasks/get", {"taskId": task_id, "_meta": TASKS})
                if got["status"] != "working":
                    break
                await anyio.sleep(0.01)
    assert got["status"] == "completed"
    assert [b["text"] for b in got["result"]["content"]] == ["81", "stamped"]  # doubled once per pass: 20*2*2+1
    assert [entry for entry in log if entry[0] == "call_tool"] == [
        ("call_tool", "job", {"a": 20}, False), ("call_tool", "job", {"a": 40}, True)]
    assert ("request", "tools/call", True, True) in log


async def test_on_request_wraps_the_specific_hook_and_the_first_middleware_is_outermost() -> None:
    order: list[str] = []

    class Named(Middleware):
        def __init__(self, name: str) -> None:
            self.name = name

        async def on_request(self, call: Call, call_next: CallNext) -> Any:
            order.append(f"{self.name}.request")
            return await call_next(call)

        async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
            order.append(f"{self.name}.call_tool")
            result = await call_next(call)
            order.append(f"{self.name}.done")
            return result

    app = MCPServer("order", middleware=[Named("a")])
    app.add_middleware(Named("b"))

    @app.tool
    async def noop() -> str:
        return "ok"

    async with connect(app) as client:
        order.clear()
        await client.call_tool("noop", {})
    assert order == ["a.request", "a.call_tool", "b.request", "b.call_tool", "b.done", "a.done"]


async def test_an_empty_chain_is_no_chain_and_hooks_not_overridden_are_left_out() -> None:
    app = MCPServer("plain")
    assert app.pipeline is None

    class OnlyReads(Middleware):
        async def on_read_resource(self, call: Call, call_next: CallNext) -> Any:
            return await call_next(call)

    app.add_middleware(OnlyReads())
    assert app.pipeline is not None
    from mcp_kit._app.pipeline import _answer

    assert app.pipeline._chains["tools/call"] is _answer  # nothing of OnlyReads around tools/call
    assert app.pipeline._chains["resources/read"] is not _answer
    with pytest.raises(TypeError, match="Middleware"):
        app.add_middleware(object())  # type: ignore[arg-type]


async def test_a_crashing_tool_raises_tool_crashed_inside_the_chain_and_answers_as_without_middleware() -> None:
    seen: list[BaseException] = []

    class Watch(Middleware):
        async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
            try:
                return await call_next(call)
            except ToolCrashed as crashed:
                seen.append(crashed.error)
                raise

    for middleware in ([], [Watch()]):
        app = MCPServer("crash", middleware=middleware)

        @app.tool
        async def boom() -> str:
            raise KeyError("DATABASE_URL")

        async with connect(app) as client:
            result = await client.call_tool("boom", {})
        assert result == {"content": [{"type": "text", "text": "Tool 'boom' failed: KeyError: 'DATABASE_URL'"}],
                          "isError": True}
    assert [type(error) for error in seen] == [KeyError]


async def test_a_middleware_may_answer_a_tool_call_early_without_running_it() -> None:
    ran: list[str] = []

    class Canned(Middleware):
        async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
            return {"content": [{"type": "text", "text": "canned"}], "isError": False}

    app = MCPServer("canned", middleware=[Canned()])

    @app.tool
    async def work() -> str:
        ran.append("work")
        return "real"

    async with connect(app) as client:
        assert (await client.call_tool("work", {}))["content"][0]["text"] == "canned"
        stateless = await client.request("tools/call", {"name": "work", "_meta": STATELESS})
        assert stateless["content"][0]["text"] == "canned" and stateless["resultType"] == "complete"
    assert ran == []
