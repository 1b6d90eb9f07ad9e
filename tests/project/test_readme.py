"""Every Python example in the README runs: each block is executed, its app served in memory."""

from __future__ import annotations

import inspect
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_kit import MCPServer
from mcp_kit._cli.main import main
from mcp_kit.testing import connect
from tests.helpers.support import http_server

# What a model would try with the README's tools, and a piece of what it must get back.
CALLS = {
    "add": ({"a": 1, "b": 2}, "3.0"),
    "convert": ({"value": 212, "to": "celsius"}, '"value": 100.0'),
    "write_note": ({"name": "todo", "text": "x"}, "saved"),
    "read_note": ({"name": "todo"}, "no note 'todo' yet"),
    "stock_level": ({"sku": "AB-1234"}, "7"),
    "build_report": ({"items": 3}, "report over 3 items"),
    "github_login": ({}, "not signed in with GitHub"),
    "weather_get_forecast": ({"city": "Oslo"}, "3 days in Oslo (celsius)"),
    "forecast": ({"city": "Oslo"}, "Oslo"),
}
README = Path(__file__).resolve().parents[2] / "README.md"
BLOCKS = [block for block in re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
          if "mcp_kit.functions" not in block]  # host-side examples: tests/functions/test_readme_functions.py


def test_the_readme_has_examples() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.anyio
@pytest.mark.parametrize("index", range(len(BLOCKS)))
async def test_readme_example_runs(index: int) -> None:
    namespace: dict[str, Any] = {"__name__": f"readme_example_{index}"}
    exec(compile(BLOCKS[index], f"README.md[python block {index}]", "exec"), namespace)
    app = namespace.get("app")
    assert isinstance(app, MCPServer)
    async with connect(app) as client:
        tools = await client.list_tools()
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        prompts = await client.list_prompts()
        assert tools or resources or templates or prompts
        for tool in tools:
            arguments, expected = CALLS[tool["name"]]
            result = await client.call_tool(tool["name"], arguments)
            assert result["isError"] is False and expected in result["content"][0]["text"]
    for name, value in namespace.items():
        if name.startswith("test_") and inspect.iscoroutinefunction(value):
            await value()


SHELL_BLOCKS = re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
JSON_BLOCKS = re.findall(r"```json\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_json_examples_are_valid_json() -> None:
    assert JSON_BLOCKS
    for block in JSON_BLOCKS:
        json.loads(block)


def test_readme_mcp_kit_commands_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capfd: pytest.CaptureFixture[str]) -> None:
    """Every `mcp-kit` line of the README (but `run` and `proxy`, which serve forever) exits 0 as written: split
    as the shell splits it (quotes, `~`, the trailing comment) and run through the console script's entry point
    (`mcp_kit._cli.main:main`) in this process, from the repository, with a user's home of its own. The servers
    the lines name still start as processes; the command itself runs here to spare an interpreter per line
    (tests/cli/test_main.py runs the `mcp-kit` process itself)."""
    root = README.parent
    commands = [line.strip() for block in SHELL_BLOCKS for line in block.splitlines()
                if re.match(r"(\.venv/bin/)?mcp-kit (?!run |proxy )", line.strip())]
    assert len(commands) >= 8
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", f"{root / '.venv' / 'bin'}:{os.environ['PATH']}")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.chdir(root)
    (tmp_path / "Documents").mkdir()  # the --root the README's examples name, as a user's home has it
    with http_server(["-m", "servers.stock", "--provider", "sample"]) as base:
        for command in commands:
            words = [os.path.expanduser(word) for word in
                     shlex.split(command.replace("http://127.0.0.1:8000", base), comments=True)]
            assert words[0] in ("mcp-kit", ".venv/bin/mcp-kit"), command
            capfd.readouterr()
            code = main(words[1:])
            out, err = capfd.readouterr()
            assert code == 0, f"{command}\n{out[-500:]}\n{err[-1500:]}"
    written = json.loads((tmp_path / ".config" / "Claude" / "claude_desktop_config.json").read_text())
    assert set(written["mcpServers"]) >= {"stock", "weather", "filesystem"}


def test_the_testing_example_runs_under_pytest_as_copied(tmp_path: Path) -> None:
    """The README's test, saved as a file and run by pytest exactly as a reader would."""
    [block] = [b for b in BLOCKS if "def test_" in b and "mcp_kit.extensions" not in b]  # the extension one runs above
    (tmp_path / "test_calculator.py").write_text(block, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_calculator.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout and "warning" not in done.stdout.lower()


@pytest.mark.anyio
async def test_the_calculator_claims_what_its_numbers_are() -> None:
    [block] = [b for b in BLOCKS if 'MCPServer("calculator", instructions=' in b]
    namespace: dict[str, Any] = {"__name__": "readme_calculator"}
    exec(compile(block, "README.md[calculator]", "exec"), namespace)
    async with connect(namespace["app"]) as client:
        instructions = client.initialize_result["instructions"]
        result = await client.call_tool("add", {"a": 0.1, "b": 0.2})
    assert result["content"][0]["text"] == "0.30000000000000004"  # floats, as the instructions say
    assert "floating point" in instructions and "not exact" in instructions


def top_level_headings(text: str) -> list[str]:
    """The README's `## ` headings in order, outside code blocks."""
    headings, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("## "):
            headings.append(line[3:].strip())
    return headings


def test_a_new_user_meets_the_sections_in_the_order_they_need_them() -> None:
    """Install, write, test, connect, run, deploy: the first six sections, in that order; the rest after them."""
    headings = top_level_headings(README.read_text(encoding="utf-8"))
    first = ["Install", "Write a server", "Test your server", "Connect a client", "Run it", "Deploy"]
    assert headings[: len(first)] == first
    later = ["Examples", "Versioning policy", "API reference", "Performance", "Security model", "Development"]
    assert set(later) <= set(headings[len(first):])
    assert headings[-1] == "Development"


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_to_a_readme_section_finds_its_heading() -> None:
    text = README.read_text(encoding="utf-8")
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    anchors = {anchor(line.lstrip("#")) for line in prose.splitlines() if re.match(r"#{1,4} ", line)}
    links = set(re.findall(r"\]\(#([^)]+)\)", prose))
    assert len(links) >= 20
    assert sorted(links - anchors) == []
    bench = (README.parent / "bench" / "README.md").read_text(encoding="utf-8")
    bench_anchors = {anchor(line.lstrip("#")) for line in re.sub(r"```.*?```", "", bench, flags=re.S).splitlines()
                     if re.match(r"#{1,4} ", line)}
    assert sorted(set(re.findall(r"\]\(bench/README\.md#([^)]+)\)", prose)) - bench_anchors) == []


def test_the_examples_index_lists_every_example_and_reference_server_with_a_command() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Examples\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| [`")]
    listed = {re.match(r"\| \[`([^`]+)`\]", row).group(1).rstrip("/") for row in rows}  # type: ignore[union-attr]
    root = README.parent
    examples = {f"examples/{p.name}" for p in (root / "examples").iterdir() if not p.name.startswith((".", "_"))}
    servers = {f"servers/{p.name}" for p in (root / "servers").iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert examples | servers <= listed
    for row in rows:
        command = row.rstrip(" |").rsplit(" | ", 1)[1].strip("`")
        assert command.startswith((".venv/bin/python ", "OPENAI_MODEL=", "bin/", "served by ")), row
        script = re.search(r"\.venv/bin/python (\S+\.py)", command)
        if script:
            assert (root / script.group(1)).is_file(), command
        module = re.search(r"\.venv/bin/python -m (\S+)", command)
        if module:
            assert (root / module.group(1).replace(".", "/") / "__main__.py").is_file(), command
