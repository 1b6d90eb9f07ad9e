"""The public extension API (SEP-2133): an extension declares its id and settings in
`capabilities.extensions` (per era), reads the client's, serves methods and notifications through the
same method table and middleware chain as the core methods, adds `_meta` to tools and resources, and
hides tools; tasks and skills are built on it, with no special case left in the method table."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

import mcp_kit._app.application as application_module
import mcp_kit._app.methods as methods_module
from mcp_kit import Context, MCPServer, Middleware
from mcp_kit._protocol.errors import MCPError
from mcp_kit.extensions import CORE_METHODS, Extension, method, notification
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

ID = "com.example/probe"


def envelope(extensions: dict[str, Any] | None = None) -> dict[str, Any]:
    capabilities: dict[str, Any] = {} if extensions is None else {"extensions": extensions}
    return {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": capabilities}


class Probe(Extension):
    id = ID
    cacheable = frozenset({"probe/echo"})

    def __init__(self) -> None:
        self.heard: list[Any] = []
        self.started = 0
        self.stopped = 0

    def settings(self, version: str) -> dict[str, Any] | None:
        return {"level": 2} if version >= "2025-06-18" else None  # not declared in older versions

    @method("probe/echo")
    async def echo(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"echo": params.get("say"), "client": self.client_settings(ctx), "version": ctx.protocol_version}

    @method("probe/strict")
    async def strict(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"settings": self.require_client(ctx, "probe/strict")}

    @notification("notifications/probe/ping")
    async def pinged(self, params: dict[str, Any], ctx: Context) -> None:
        self.heard.append(params.get("n"))

    def tool_meta(self, tool: Any) -> dict[str, Any] | None:
        return {ID: {"probed": True}} if tool.name == "shown" else None

    def resource_meta(self, uri: str) -> dict[str, Any] | None:
        return {ID: {"uri": uri}}

    def tool_visible(self, tool: Any, ctx: Context) -> bool:
        return tool.name != "secret" or self.client_settings(ctx) is not None

    def running(self, task_group: Any) -> Any:
        import contextlib

        @contextlib.asynccontextmanager
        async def run() -> Any:
            self.started += 1
            try:
                yield
            finally:
                self.stopped += 1

        return run()


class Seen(Middleware):
    def __init__(self) -> None:
        self.methods: list[str] = []
        self.notifications: list[str] = []

    async def on_request(self, call: Any, call_next: Any) -> Any:
        self.methods.append(call.method)
        return await call_next(call)

    async def on_notification(self, call: Any, call_next: Any) -> Any:
        self.notifications.append(call.method)
        return await call_next(call)


def build(middleware: Middleware | None = None) -> tuple[MCPServer, Probe]:
    app = MCPServer("ext", middleware=[middleware] if middleware else [])
    probe = app.add_extension(Probe())

    @app.tool
    def shown() -> str:
        """A tool."""
        return "shown"

    @app.tool
    def secret() -> str:
        """Only for clients declaring the probe."""
        return "secret"

    @app.resource("mem://one")
    def one() -> str:
        return "one"

    return app, probe


async def test_settings_are_declared_per_version_and_the_client_s_are_read() -> None:
    app, _ = build()
    async with connect(app, extensions={ID: {"mode": "fast"}}) as client:
        assert client.initialize_result["capabilities"]["extensions"] == {ID: {"level": 2}}
        answer = await client.request("probe/echo", {"say": "hi"})
        assert answer == {"echo": "hi", "client": {"mode": "fast"}, "version": client.initialize_result[
            "protocolVersion"]}
    async with connect(app, protocol_version="2025-03-26") as old:
        assert "extensions" not in old.initialize_result["capabilities"]
        discovered = await old.request("server/discover", {"_meta": envelope()})
        assert discovered["capabilities"]["extensions"][ID] == {"level": 2}


async def test_extension_methods_and_notifications_pass_the_middleware_in_both_eras() -> None:
    seen = Seen()
    app, probe = build(seen)
    async with connect(app) as client:
        assert (await client.request("probe/echo", {"say": 1}))["client"] is None
        await client.notify("notifications/probe/ping", {"n": 7})
        await client.request("ping", {})
        modern = await client.request("probe/echo", {"say": 2, "_meta": envelope({ID: {"x": 1}})})
        assert modern["client"] == {"x": 1} and modern["version"] == "2026-07-28"
        assert modern["resultType"] == "complete" and "ttlMs" in modern  # a cacheable extension method
    assert seen.methods.count("probe/echo") == 2
    assert "notifications/probe/ping" in seen.notifications and probe.heard == [7]
    assert probe.started == 1 and probe.stopped == 1


async def test_an_undeclared_client_is_refused_with_the_capability_it_lacks() -> None:
    app, _ = build()
    async with connect(app) as client:
        with pytest.raises(MCPError) as refused:
            await client.request("probe/strict", {"_meta": envelope()})
        assert refused.value.code == -32021
        assert refused.value.data == {"requiredCapabilities": {"extensions": {ID: {}}}}
        assert (await client.request("probe/strict", {"_meta": envelope({ID: {"a": 1}})}))["settings"] == {"a": 1}


async def test_meta_is_added_and_tools_are_hidden_from_callers_the_extension_says() -> None:
    app, _ = build()
    async with connect(app) as plain:
        listed = (await plain.request("tools/list", {}))["tools"]
        assert [tool["name"] for tool in listed] == ["shown"]
        assert listed[0]["_meta"] == {ID: {"probed": True}}
        resources = (await plain.request("resources/list", {}))["resources"]
        assert resources[0]["_meta"] == {ID: {"uri": "mem://one"}}
        with pytest.raises(MCPError):  # hidden: as if it did not exist
            await plain.request("tools/call", {"name": "secret", "arguments": {}})
    async with connect(app, extensions={ID: {}}) as declared:
        assert [tool["name"] for tool in (await declared.request("tools/list", {}))["tools"]] == ["shown", "secret"]
        assert (await declared.call_tool("secret", {}))["content"][0]["text"] == "secret"
    # the registry's cached definitions were not changed by the extension's _meta
    assert "_meta" not in app.tools.get("shown").wire("2025-11-25")  # type: ignore[union-attr]


def test_ids_and_method_names_are_checked() -> None:
    app = MCPServer("ids")

    class Bad(Extension):
        id = "no-slash"

    with pytest.raises(ValueError, match="vendor-prefix/name"):
        app.add_extension(Bad())

    class Greedy(Extension):
        id = "com.example/greedy"

        @method("tools/call")
        async def steal(self, params: dict[str, Any], ctx: Context) -> Any:
            return {}

    with pytest.raises(ValueError, match="tools/call"):
        app.add_extension(Greedy())
    assert app.extension("com.example/greedy") is None

    class Eavesdropper(Extension):
        id = "com.example/eavesdropper"

        @notification("notifications/initialized")
        async def initialized(self, params: dict[str, Any], ctx: Context) -> None: ...

    with pytest.raises(ValueError, match="notifications/initialized"):
        app.add_extension(Eavesdropper())
    assert app.extension("com.example/eavesdropper") is None
    with pytest.raises(TypeError):
        app.add_extension(object())  # type: ignore[type-var]


def test_the_method_table_has_no_special_case_for_tasks_or_skills() -> None:
    assert set(methods_module.ROUTES) <= CORE_METHODS
    tree = ast.parse(inspect.getsource(methods_module))
    imported = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [name for name in imported if "tasks" in name or "skills" in name]
    # the application names the two extensions only where it builds them (its task options, add_skills)
    tree = ast.parse(inspect.getsource(application_module))
    users = {function.name for function in ast.walk(tree) if isinstance(function, ast.FunctionDef)
             for node in ast.walk(function) if isinstance(node, ast.Name) and node.id in ("Tasks", "Skills")}
    assert users == {"__init__", "add_skills"}
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not attributes & {"task_store", "task_runner", "skills", "supports_tasks"}


async def test_tasks_and_skills_are_extensions_of_every_application(tmp_path: Path) -> None:
    app = MCPServer("both")
    assert app.extension("io.modelcontextprotocol/tasks") is not None
    skill = tmp_path / "hello"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: hello\ndescription: Say hello.\n---\nSay hello.\n")
    app.add_skills(tmp_path)
    assert app.extension("io.modelcontextprotocol/skills") is not None
    async with connect(app) as client:
        listed = await client.request("skills/list", {})
        assert [entry["uri"] for entry in listed["skills"]] == ["skill://hello/SKILL.md"]
