"""The shared command line installs the built-in middleware on every server."""

from __future__ import annotations

import argparse

from mcp_kit import MCPServer, add_run_arguments
from mcp_kit._serving.serve import apply_pipeline_arguments
from mcp_kit.middleware import MaskErrors, RequestLog, ResultSizeLimit, Timeouts


def parse(*argv: str) -> argparse.Namespace:
    return add_run_arguments(argparse.ArgumentParser()).parse_args(list(argv))


def test_every_option_installs_its_middleware() -> None:
    app = MCPServer("cli")
    apply_pipeline_arguments(app, parse("--tool-timeout", "30", "--mask-errors", "--max-result-chars", "5000",
                                        "--list-by-scope", "--log-requests"))
    slots = app.builtin_middleware
    assert isinstance(slots["timeouts"], Timeouts) and slots["timeouts"].default == 30
    assert isinstance(slots["mask_errors"], MaskErrors) and isinstance(slots["request_log"], RequestLog)
    assert isinstance(slots["result_size"], ResultSizeLimit) and slots["result_size"].max_chars == 5000
    assert app.list_by_scope is True and app.pipeline is not None


def test_without_options_nothing_is_installed_and_masking_follows_the_transport() -> None:
    app = MCPServer("cli")
    apply_pipeline_arguments(app, parse())
    assert app.pipeline is None and app.mask_errors is None
    app.mask_errors_for("stdio")
    assert app.pipeline is None
    app.mask_errors_for("http")
    assert isinstance(app.builtin_middleware["mask_errors"], MaskErrors)
    off = MCPServer("cli")
    apply_pipeline_arguments(off, parse("--no-mask-errors"))
    off.mask_errors_for("http")
    assert "mask_errors" not in off.builtin_middleware


def test_the_reference_servers_take_the_options() -> None:
    from servers.stock.__main__ import parse_args

    args = parse_args(["--tool-timeout", "30", "--mask-errors"])
    assert args.tool_timeout == 30 and args.mask_errors is True
