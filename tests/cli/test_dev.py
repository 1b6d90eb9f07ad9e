"""`mcp-kit dev`: the official SDK client stays connected while the server file is edited, broken and fixed;
`--inspector` builds the Inspector's command line (and the Inspector CLI, no browser, talks to the dev server)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client, types

from mcp_kit._cli.dev import dev_self_command, dev_target, inspector_command
from tests.helpers.support import ROOT

pytestmark = pytest.mark.anyio

FIRST = '''import os

import anyio

from mcp_kit import MCPServer

app = MCPServer("devloop")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@app.tool()
async def gate(path: str) -> str:
    """Answer once PATH exists (at most 30 s)."""
    for _ in range(600):
        if os.path.exists(path):
            return "opened"
        await anyio.sleep(0.05)
    return "timed out"
'''
BROKEN = FIRST + "\n\n@app.tool()\ndef multiply(a: int, b: int) -> int\n    return a * b\n"  # no colon
SECOND = FIRST.replace("import MCPServer", "import Context, MCPServer") + '''

@app.tool()
def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


@app.tool()
async def roots(ctx: Context) -> str:
    """The client's roots: a request from the server to the client, through the dev process."""
    return ",".join(str(root.uri) for root in await ctx.list_roots())
'''


class Inbox:
    """The notifications the SDK's message handler receives."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        self.items.append(message)
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for(self, kind: type, timeout: float) -> Any:
        with anyio.fail_after(timeout):
            while True:
                for item in self.items:
                    if isinstance(item, kind):
                        return item
                await self.changed.wait()


async def wait_for_text(path: Path, text: str, timeout: float = 30.0) -> str:
    """The dev process's stderr (a file) once it contains `text` (bounded polling of a file we do not own)."""
    with anyio.fail_after(timeout):
        while text not in (content := path.read_text(encoding="utf-8", errors="replace")):
            await anyio.sleep(0.05)
    return content


def text(result: types.CallToolResult) -> str:
    assert result.is_error is False
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def list_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])


def dev_params(script: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "mcp_kit", "dev", script.name],
                                 cwd=str(script.parent), env={"PYTHONPATH": str(ROOT)})


async def test_sdk_client_sees_a_new_tool_after_the_file_is_edited_and_survives_a_syntax_error(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(FIRST, encoding="utf-8")
    stderr_path = tmp_path / "stderr.txt"
    inbox = Inbox()
    with stderr_path.open("w", encoding="utf-8") as errlog:
        async with (stdio_client(dev_params(script), errlog=errlog) as (read, write),
                    ClientSession(read, write, message_handler=inbox, list_roots_callback=list_roots) as session):
            init = await session.initialize()
            assert init.server_info.name == "devloop"
            assert init.capabilities.tools is not None and init.capabilities.tools.list_changed is True
            assert [t.name for t in (await session.list_tools()).tools] == ["add", "gate"]
            assert text(await session.call_tool("add", {"a": 2, "b": 3})) == "5"
            await wait_for_text(stderr_path, "watching")

            script.write_text(BROKEN, encoding="utf-8")
            log = await wait_for_text(stderr_path, "the previous version keeps serving")
            assert "SyntaxError" in log and "server.py" in log
            assert not [m for m in inbox.items if isinstance(m, types.ToolListChangedNotification)]
            assert text(await session.call_tool("add", {"a": 4, "b": 5})) == "9"

            opened = tmp_path / "gate"
            answers: list[str] = []
            async with anyio.create_task_group() as group:
                async def in_flight() -> None:  # a call the old version is still serving when the new one starts
                    answers.append(text(await session.call_tool("gate", {"path": str(opened)})))

                group.start_soon(in_flight)
                script.write_text(SECOND, encoding="utf-8")
                await inbox.wait_for(types.ToolListChangedNotification, timeout=30)
                assert [t.name for t in (await session.list_tools()).tools] == ["add", "gate", "multiply", "roots"]
                assert not answers
                opened.touch()
            assert answers == ["opened"]
            product = await session.call_tool("multiply", {"a": 6, "b": 7})
            assert product.is_error is False and text(product) == "42"
            assert text(await session.call_tool("add", {"a": 1, "b": 1})) == "2"
            assert text(await session.call_tool("roots", {})) == "file:///work/project"
    assert "reloaded (version 3)" in stderr_path.read_text(encoding="utf-8")


def test_dev_runs_the_target_with_mcp_kit_run_over_stdio_and_watches_its_directory(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(FIRST, encoding="utf-8")
    target = dev_target("app.py:app", None, ["--log-level", "info"], [tmp_path / "data"], python="/py",
                        here=tmp_path)
    assert target.command == ["/py", "-m", "mcp_kit", "run", "app.py:app", "--transport", "stdio",
                              "--log-level", "info"]
    assert target.watch == [tmp_path.resolve(), (tmp_path / "data").resolve()]
    package = dev_target(None, "servers.stock", ["--provider", "sample"], python="/py", here=ROOT)
    assert package.command == ["/py", "-m", "servers.stock", "--provider", "sample"]
    assert package.watch == [ROOT / "servers"]


def test_inspector_command_puts_the_dev_server_after_a_separator(tmp_path: Path) -> None:
    args = argparse.Namespace(target="server.py", module=None, watch=[], server_args=["--log-level", "debug"])
    dev = dev_self_command(args, python="/venv/bin/python")
    assert dev == ["/venv/bin/python", "-m", "mcp_kit", "dev", "server.py", "--", "--log-level", "debug"]
    command = inspector_command(dev, tmp_path, env={"PYTHONPATH": "/src"}, root=ROOT,
                                which=lambda name: f"/usr/bin/{name}")
    launcher = ROOT / "conformance/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
    if launcher.is_file():
        assert command[1] == str(launcher) and Path(command[0]).name == "node"
    else:
        assert command[:3] == ["/usr/bin/npx", "-y", "@modelcontextprotocol/inspector"]
    assert command[-len(dev) - 5:] == ["-e", "PYTHONPATH=/src", "--cwd", str(tmp_path), "--", *dev]
    # without the pinned Inspector, npx fetches the official one
    fallback = inspector_command(dev, tmp_path, root=tmp_path, which=lambda name: f"/usr/bin/{name}")
    assert fallback == ["/usr/bin/npx", "-y", "@modelcontextprotocol/inspector", "--cwd", str(tmp_path), "--", *dev]


def test_the_inspector_cli_lists_the_dev_servers_tools(tmp_path: Path) -> None:
    """The same command line, in the Inspector's --cli mode instead of its web UI: no browser, a real Inspector."""
    command = inspector_command([sys.executable, "-m", "mcp_kit", "dev", "server.py"], tmp_path,
                                env={"PYTHONPATH": str(ROOT)}, root=ROOT)
    if not Path(command[1]).is_file():
        pytest.skip("the pinned Inspector is not installed (npm ci in conformance/)")
    (tmp_path / "server.py").write_text(SECOND, encoding="utf-8")
    separator = command.index("--")
    cli = [command[0], command[1], "--cli", *command[2:separator], "--method", "tools/list", *command[separator:]]
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    done = subprocess.run(cli, capture_output=True, text=True, timeout=90, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [tool["name"] for tool in json.loads(done.stdout)["tools"]] == ["add", "gate", "multiply", "roots"]


async def test_a_server_broken_at_the_start_answers_initialize_once_it_is_fixed(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(BROKEN, encoding="utf-8")
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("w", encoding="utf-8") as errlog:
        async with (stdio_client(dev_params(script), errlog=errlog) as (read, write),
                    ClientSession(read, write) as session, anyio.create_task_group() as group):
            initialized = anyio.Event()

            async def initialize() -> None:
                await session.initialize()
                initialized.set()

            group.start_soon(initialize)
            log = await wait_for_text(stderr_path, "no version of the server is running yet")
            assert "SyntaxError" in log and not initialized.is_set()
            script.write_text(FIRST, encoding="utf-8")
            with anyio.fail_after(30):
                await initialized.wait()
            assert [t.name for t in (await session.list_tools()).tools] == ["add", "gate"]
