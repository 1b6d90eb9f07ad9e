"""What every reference server tells a model about its tools, collected for the golden comparison.

`collect()` lists the tools of the reference servers (stock, weather, filesystem in both modes),
the demo, the conformance fixture, the tool-feature app of `test_tools` and the benchmark's generated
tools, page by page in every protocol version (cursors included), and calls each tool once with
arguments that can never validate (every property given an object, plus an unknown argument), so
the answers are the validation messages a model reads and no tool ever runs.

`tests/fixtures/tool_listings.json` holds what `collect()` returned with tool schemas built eagerly, at
registration, as the eager code did (regenerated once from that code when the tasks extension added its
fields and tools, and again when the stock and weather tools gained their MCP Apps `_meta.ui` links: byte for byte
what the lazy code gives); `test_tool_listings_golden` checks that
nothing a client sees has changed.
Regenerate it only for an intended change of a schema or a message:

    .venv/bin/python -m tests.helpers.tool_listings > tests/fixtures/tool_listings.json
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from mcp_kit import MCPError, MCPServer
from mcp_kit.testing import Client, connect

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "tool_listings.json"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}
NOT_AN_ARGUMENT = "__golden_not_an_argument__"
MAX_PAGES = 100


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bench_tools() -> MCPServer:
    sys.path.insert(0, str(ROOT / "bench" / "servers"))
    try:
        workload = _load(ROOT / "bench" / "servers" / "_workload.py", "golden_bench_workload")
    finally:
        sys.path.pop(0)
    app = MCPServer("bench", page_size=3)
    for index in range(7):
        app.tool(workload.generated_tool(index))
    app.tool(description=workload.BUSY_DESCRIPTION)(workload.busy)
    return app


def apps(root: Path) -> dict[str, Callable[[], MCPServer]]:
    """Every app whose tool listing is compared, by name."""
    from servers.filesystem.server import build_server as filesystem
    from servers.stock.sample_provider import SampleProvider as StockSample
    from servers.stock.server import build_server as stock
    from servers.weather.sample_provider import SampleProvider as WeatherSample
    from servers.weather.server import build_server as weather
    from tests.conformance.fixture_server import build_app as conformance_app
    from tests.primitives.test_tools import build_app as tools_app

    return {
        "stock": lambda: stock(StockSample(clock=lambda: 1_700_000_000.0)),
        "weather": lambda: weather(WeatherSample(clock=lambda: 1_700_000_000.0)),
        "filesystem": lambda: filesystem([root]),
        "filesystem-read-only": lambda: filesystem([root], read_only=True, confirm_writes=True),
        "demo": lambda: _load(ROOT / "examples" / "demo_server.py", "golden_demo_server").app,
        "conformance-fixture": conformance_app,
        "test_tools": tools_app,
        "bench-generated": _bench_tools,
    }


async def _pages(client: Client, meta: dict[str, Any] | None) -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = []
    params: dict[str, Any] = {"_meta": meta} if meta else {}
    for _ in range(MAX_PAGES):
        page = await client.request("tools/list", params)
        pages.append(page)
        if "nextCursor" not in page:
            return pages
        params = {**params, "cursor": page["nextCursor"]}
    raise AssertionError(f"more than {MAX_PAGES} pages")


def _never_valid(tool: dict[str, Any]) -> dict[str, Any]:
    arguments: dict[str, Any] = {name: {"not": "valid"} for name in tool["inputSchema"].get("properties", {})}
    arguments[NOT_AN_ARGUMENT] = 1
    return arguments


async def _refusal(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    """The answer to a call that can never validate: a tool result, or the protocol error (a task-only tool
    called plainly is refused before its arguments are looked at)."""
    try:
        return await client.request("tools/call", {"name": name, "arguments": arguments})
    except MCPError as exc:
        return {"error": {"code": exc.code, "message": exc.message}}


async def _one_app(app: MCPServer) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for version in HANDSHAKE_VERSIONS:
        async with connect(app, protocol_version=version) as client:
            out[version] = await _pages(client, None)
    async with connect(app, initialize=False) as client:
        out["2026-07-28"] = await _pages(client, MODERN_META)
    refusals: dict[str, Any] = {}
    async with connect(app) as client:
        for page in out[HANDSHAKE_VERSIONS[-1]]:
            for tool in page["tools"]:
                refusals[tool["name"]] = [
                    await _refusal(client, tool["name"], arguments)
                    for arguments in ({NOT_AN_ARGUMENT: 1}, _never_valid(tool))
                ]
    out["refusals"] = refusals
    return out


def _normalised(value: Any, root: Path) -> Any:
    text = json.dumps(value, ensure_ascii=False)  # key order kept: it is part of the bytes on the wire
    return json.loads(text.replace(json.dumps(str(root))[1:-1], "<ROOT>"))


async def collect_async() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="golden-tools-") as tmp:
        root = Path(tmp).resolve()
        return {name: _normalised(await _one_app(build()), root) for name, build in apps(root).items()}


def collect() -> dict[str, Any]:
    """Each app's tools/list pages per protocol version and its validation refusals, per tool."""
    return anyio.run(collect_async)


def _line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dump(listings: dict[str, Any]) -> str:
    """The fixture's text: one line per page and per tool's refusals, key order as on the wire."""
    apps_text = []
    for app, listing in listings.items():
        parts = [f"  {_line(version)}: [\n" + ",\n".join(f"   {_line(page)}" for page in pages) + "\n  ]"
                 for version, pages in listing.items() if version != "refusals"]
        parts.append('  "refusals": {\n' + ",\n".join(f"   {_line(tool)}: {_line(answers)}"
                                                       for tool, answers in listing["refusals"].items()) + "\n  }")
        apps_text.append(f" {_line(app)}: {{\n" + ",\n".join(parts) + "\n }")
    return "{\n" + ",\n".join(apps_text) + "\n}\n"


if __name__ == "__main__":
    sys.stdout.write(dump(collect()))
