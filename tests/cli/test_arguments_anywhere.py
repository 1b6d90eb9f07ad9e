"""Options between positional arguments, for every `mcp-kit` subcommand (`parse_intermixed_args` per command),
and `--help` showing the defaults."""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from mcp_kit._cli.main import build_parser, main, parse_arguments

STOCK = f"{sys.executable} -m servers.stock --provider sample"


@pytest.mark.parametrize("argv, expected", [
    (["call", "T", "get_stock_price", "--timeout", "5", "ticker=AAPL"],
     {"target": "T", "tool": "get_stock_price", "timeout": 5.0, "pairs": ["ticker=AAPL"]}),
    (["call", "T", "--json", "tool", "a=1", "--timeout", "2", "b=2"],
     {"tool": "tool", "json": True, "timeout": 2.0, "pairs": ["a=1", "b=2"]}),
    (["config", "cursor", "--project", "D", "--write", "stock"],
     {"client": "cursor", "project": Path("D"), "write": True, "servers": ["stock"]}),
    (["config", "claude", "stock", "--root", "/r", "weather"], {"servers": ["stock", "weather"], "root": [Path("/r")]}),
    (["prompt", "T", "ask", "--timeout", "3", "topic=owls"], {"name": "ask", "timeout": 3.0, "pairs": ["topic=owls"]}),
    (["read", "--timeout", "4", "T", "note://x"], {"target": "T", "uri": "note://x", "timeout": 4.0}),
    (["run", "--transport", "http", "server.py", "--port", "0"],
     {"spec": "server.py", "transport": "http", "port": 0}),
    (["tools", "T", "--format", "anthropic"], {"target": "T", "format": "anthropic"}),
    (["check", "server.py"], {"spec": "server.py"}),
])
def test_options_may_come_between_positional_arguments(argv: list[str], expected: dict[str, object]) -> None:
    args = parse_arguments(build_parser(), argv)
    assert args.command == argv[0]
    assert {key: getattr(args, key) for key in expected} == expected


def test_a_real_call_with_an_option_between_its_arguments() -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["call", STOCK, "get_stock_price", "--timeout", "30", "ticker=AAPL"])
    assert code == 0 and "AAPL" in out.getvalue()


def test_unknown_options_still_fail_with_the_subcommands_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_arguments(build_parser(), ["call", "T", "tool", "--no-such-option"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: mcp-kit call") and "unrecognized arguments: --no-such-option" in err


def test_subcommand_help_shows_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_arguments(build_parser(), ["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "(default: 127.0.0.1)" in help_text and "[env MCP_PORT] (default: 8000)" in help_text
    assert "(default: 10)" in help_text  # --shutdown-grace


