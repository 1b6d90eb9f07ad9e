"""`mcp-kit tools TARGET --format ... [--strict]`: a server's tools as function definitions, over stdio,
Streamable HTTP and legacy SSE, checked against the vendors' request types."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcp_kit._cli.main import main

# The vendors' packages (openai, anthropic, google-genai) are imported by the tests that use them: importing
# them takes seconds, and every pytest process imports every test file.
from tests.helpers.reference_servers import ROOT, STOCK
from tests.helpers.strict_rules import strict_violations
from tests.helpers.support import http_server
from tests.helpers.vendor_types import check_typed

STOCK_LINE = shlex.join(STOCK)
MAP_SERVER = '''
from mcp_kit import MCPServer

app = MCPServer("tally")


@app.tool
def tally(counts: dict[str, int]) -> int:
    """Add up counts by name."""
    return sum(counts.values())


@app.tool(read_only=True)
def echo(text: str) -> str:
    """Echo."""
    return text


if __name__ == "__main__":
    app.run()
'''


Cli = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def cli(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`mcp-kit ARGS` through its entry point in this process, from the repository: its exit status and what
    reached file descriptors 1 and 2 (tests/cli/test_main.py runs the process itself)."""
    monkeypatch.chdir(ROOT)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        capfd.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exc:  # --help, and argparse's own refusals
            code = exc.code if isinstance(exc.code, int) else 2
        out, err = capfd.readouterr()
        return subprocess.CompletedProcess(["mcp-kit", *args], code, out, err)
    return run


def printed(cli: Cli, *args: str) -> Any:
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_openai_formats_over_stdio(cli: Cli) -> None:
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.responses import FunctionToolParam
    tools = printed(cli, "tools", STOCK_LINE)  # --format openai is the default
    assert [tool["function"]["name"] for tool in tools] == ["get_stock_price", "get_price_history",
                                                            "get_financial_statement", "compare_valuation",
                                                            "valuation_report", "search_ticker"]
    for tool in tools:
        check_typed(ChatCompletionFunctionToolParam, tool)
        assert "strict" not in tool["function"]
    strict = printed(cli, "tools", STOCK_LINE, "--format", "openai", "--strict")
    for tool in strict:
        assert tool["function"]["strict"] is True and strict_violations(tool["function"]["parameters"]) == []
    for tool in printed(cli, "tools", STOCK_LINE, "--format", "openai-responses", "--strict"):
        check_typed(FunctionToolParam, tool)
        assert tool["strict"] is True and strict_violations(tool["parameters"]) == []


def test_anthropic_and_gemini_formats_over_streamable_http_and_legacy_sse(cli: Cli) -> None:
    from anthropic.types import ToolParam
    from google.genai import types as genai
    with http_server(["-m", "servers.weather", "--provider", "sample"]) as base:
        anthropic = printed(cli, "tools", f"{base}/mcp", "--format", "anthropic")
        assert [tool["name"] for tool in anthropic] == ["get_weather", "get_forecast", "get_alerts", "search_location"]
        for tool in anthropic:
            check_typed(ToolParam, tool)
        gemini = printed(cli, "tools", f"{base}/sse", "--format", "gemini")
        (entry,) = gemini
        genai.Tool.model_validate(entry)
        forecast = entry["functionDeclarations"][1]
        assert forecast["parameters"]["properties"]["unit"] == {
            "type": "STRING", "format": "enum", "enum": ["celsius", "fahrenheit"],
            "description": "celsius: °C, km/h, mm (default). fahrenheit: °F, mph, inches. Default: \"celsius\"."}


def test_strict_applies_to_openai_formats_only(cli: Cli) -> None:
    done = cli("tools", STOCK_LINE, "--format", "anthropic", "--strict")
    assert done.returncode == 2 and done.stdout == ""
    assert "--strict is OpenAI's strict mode (formats openai, openai-responses), not anthropic's" in done.stderr


def test_a_schema_strict_mode_cannot_express_is_named_with_its_pointer(tmp_path: Path, cli: Cli) -> None:
    script = tmp_path / "tally.py"
    script.write_text(MAP_SERVER, encoding="utf-8")
    target = shlex.join([sys.executable, str(script)])
    done = cli("tools", target, "--strict")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("mcp-kit: error: tool 'tally': #/properties/counts: is a map")
    assert "(leave out --strict to export it as it is)" in done.stderr
    plain = printed(cli, "tools", target)
    assert plain[0]["function"]["parameters"]["properties"]["counts"]["additionalProperties"] == {"type": "integer"}


def test_the_command_knows_every_format() -> None:
    from mcp_kit._cli import function_tools
    from mcp_kit.functions import FORMATS

    assert function_tools.FORMAT_NAMES == tuple(FORMATS)
    assert function_tools.STRICT_FORMATS == tuple(name for name, fmt in FORMATS.items() if fmt.supports_strict)


def test_help_names_the_formats(cli: Cli) -> None:
    done = cli("tools", "--help")
    assert done.returncode == 0
    assert "{openai,openai-responses,anthropic,gemini}" in done.stdout and "--strict" in done.stdout
