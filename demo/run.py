"""The quickstart: start the stock, weather and filesystem servers as real stdio subprocesses (offline
sample data) and drive them the way a model would, printing what it sees.

Run with `bin/demo`, `python -m demo` or `python demo/run.py`. Exits 0 when every step worked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

if not __package__:  # `python demo/run.py`: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from demo import show  # noqa: E402
from mcp_kit import MCPError  # noqa: E402
from mcp_kit.client import (
    ClientError,
    ClientSession,
    connect,  # noqa: E402
)

REPO = Path(__file__).resolve().parents[1]
CITIES = ("London", "Tokyo", "New York")


def server_commands(files: Path) -> dict[str, list[str]]:
    python = sys.executable
    return {
        "stock": [python, "-m", "servers.stock", "--provider", "sample"],
        "weather": [python, "-m", "servers.weather", "--provider", "sample"],
        "filesystem": [python, "-m", "servers.filesystem", "--root", str(files)],
    }


def make_files() -> Path:
    """A scratch directory for the filesystem server, with a couple of files."""
    root = Path(tempfile.mkdtemp(prefix="mcp-kit-demo-")).resolve()
    (root / "notes.md").write_text("# Trip notes\n\n- Compare AAPL, MSFT and GOOGL before the meeting.\n"
                                   "- Pack an umbrella for London.\n", encoding="utf-8")
    (root / "todo.txt").write_text("buy tickets\n", encoding="utf-8")
    return root


@contextlib.asynccontextmanager
async def start_servers(files: Path) -> AsyncIterator[dict[str, ClientSession]]:
    """Connect to each server (each a subprocess); every process is stopped on the way out."""
    async with contextlib.AsyncExitStack() as stack:
        sessions: dict[str, ClientSession] = {}
        for name, command in server_commands(files).items():
            sessions[name] = await stack.enter_async_context(connect(command, cwd=str(REPO), timeout=30))
            info = sessions[name].server_info
            show.say(f"{name:<11} pid {sessions[name].transport.process.pid:<7} "  # type: ignore[attr-defined]
                     f"{info.get('title') or info.get('name')}")
        yield sessions


async def discover(sessions: dict[str, ClientSession]) -> None:
    show.heading(1, "Tools the model discovers (tools/list on each server)")
    for name, session in sessions.items():
        tools = await session.list_tools()
        show.say(f"{name} ({len(tools)} tools)")
        show.say(show.tool_table(tools), show.INDENT)


async def stock_quote_and_valuation(stock: ClientSession) -> None:
    show.heading(2, "A quote and a P/E comparison (stock)")
    arguments: dict[str, Any] = {"ticker": "AAPL"}
    show.say(show.call_line("stock", "get_stock_price", arguments))
    result = await stock.call_tool("get_stock_price", arguments)
    show.say("the model reads:\n" + show.model_text(result, 6), show.INDENT)
    show.say("in short: " + show.quote_line(result["structuredContent"]), show.INDENT)
    arguments = {"tickers": ["AAPL", "MSFT", "GOOGL"]}
    show.say(show.call_line("stock", "compare_valuation", arguments))
    comparison = (await stock.call_tool("compare_valuation", arguments))["structuredContent"]
    show.say(show.valuation_table(comparison), show.INDENT)


async def weather_in_three_cities(weather: ClientSession) -> None:
    show.heading(3, f"Weather in {len(CITIES)} cities, fetched concurrently (weather)")
    results: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()

    async def fetch(city: str) -> None:
        results[city] = await weather.call_tool("get_weather", {"city": city})

    async with anyio.create_task_group() as tg:
        for city in CITIES:
            tg.start_soon(fetch, city)
    elapsed = (time.perf_counter() - started) * 1000
    show.say(f"-> {len(CITIES)} get_weather calls in flight at once on one connection: {elapsed:.0f} ms in all")
    for city in CITIES:
        show.say(show.weather_line(results[city]["structuredContent"]), show.INDENT)


async def read_a_file(filesystem: ClientSession, files: Path) -> None:
    show.heading(4, "A file read (filesystem)")
    arguments = {"path": str(files / "notes.md")}
    show.say(show.call_line("filesystem", "read_text_file", arguments))
    show.say(show.model_text(await filesystem.call_tool("read_text_file", arguments)), show.INDENT)


async def subscription_update(filesystem: ClientSession, files: Path) -> None:
    show.heading(5, "A subscription update arriving (filesystem)")
    todo = files / "todo.txt"
    uri = todo.as_uri()
    await filesystem.subscribe(uri)
    show.say(f"-> resources/subscribe {uri}")
    seen = len(filesystem.notifications)
    await anyio.sleep(0.3)  # let the watcher settle before the change
    with todo.open("a", encoding="utf-8") as out:
        out.write("book a table for Friday\n")
    show.say("   (the demo appends a line to todo.txt)")
    started = time.perf_counter()
    note = await filesystem.wait_notification("notifications/resources/updated", after=seen, timeout=10,
                                              where=lambda params: params.get("uri") == uri)
    show.say(f"<- {note['method']} {note['params']['uri']}  ({(time.perf_counter() - started) * 1000:.0f} ms later)")
    contents = await filesystem.read_resource(uri)
    show.say(f"-> resources/read: {contents[0]['text'].strip().splitlines()}", "  ")
    await filesystem.unsubscribe(uri)


async def error_the_model_can_fix(stock: ClientSession) -> None:
    show.heading(6, "An error the model can act on (stock)")
    arguments = {"ticker": "AAPLE"}
    show.say(show.call_line("stock", "get_stock_price", arguments))
    result = await stock.call_tool("get_stock_price", arguments)
    show.say(
        f"isError: {str(result.get('isError', False)).lower()}, the model reads: {show.model_text(result)}", show.INDENT
    )
    show.say(show.call_line("stock", "get_stock_price", {"ticker": "AAPL"}) + "   (the model follows the hint)")
    retry = await stock.call_tool("get_stock_price", {"ticker": "AAPL"})
    show.say(show.quote_line(retry["structuredContent"]), show.INDENT)


def next_step_commands() -> tuple[str, str]:
    """This interpreter and its mcp-kit script, relative to the repository when they live in it."""
    python = Path(sys.executable)
    script = python.with_name("mcp-kit")

    def short(path: Path) -> str:
        return os.path.relpath(path, REPO) if path.is_relative_to(REPO) else str(path)

    return short(python), short(script) if script.exists() else "mcp-kit"


async def demo() -> None:
    files = make_files()
    print("mcp_kit quickstart: three reference servers as stdio subprocesses, offline sample data\n")
    try:
        async with start_servers(files) as sessions:
            await discover(sessions)
            await stock_quote_and_valuation(sessions["stock"])
            await weather_in_three_cities(sessions["weather"])
            await read_a_file(sessions["filesystem"], files)
            await subscription_update(sessions["filesystem"], files)
            await error_the_model_can_fix(sessions["stock"])
            processes = [session.transport.process for session in sessions.values()]  # type: ignore[attr-defined]
        statuses = ", ".join(str(process.returncode) for process in processes)
        print(f"\nDone: all {len(processes)} server processes stopped (exit statuses {statuses}).")
        python, mcp_kit = next_step_commands()
        print(f'Next: {mcp_kit} list "{python} -m servers.stock --provider sample"   (any MCP server, ours or not)')
        print(
            f"      {mcp_kit} config claude --root DIR --write   (adds the three servers to Claude Desktop, "
            "filesystem for DIR only; see README)"
        )
    finally:
        shutil.rmtree(files, ignore_errors=True)


def main() -> None:
    try:
        anyio.run(demo)
    except (ClientError, MCPError, TimeoutError) as exc:
        print(f"\ndemo failed: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
