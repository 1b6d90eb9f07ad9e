"""`mcp-kit tools TARGET --format openai|openai-responses|anthropic|gemini [--strict]`: function definitions.

Prints, as JSON, what goes in the `tools` field of a request to that API for every tool of the server.
A schema that cannot be exported (with --strict: one OpenAI strict mode cannot express) is an error naming
the tool and the JSON Pointer of the part, exit status 1.
"""

from __future__ import annotations

import argparse
import json

import anyio

from .exit_codes import OK, TOOL_ERROR, CommandError
from .progress import StderrReporter
from .talk import add_target_arguments, session_for

SERVER_NAME = "server"
# As in mcp_kit.functions._vendors.FORMATS, which is imported only when the command runs (it brings jsonschema
# in, which `mcp-kit run` and the other commands should not pay for at start-up).
FORMAT_NAMES = ("openai", "openai-responses", "anthropic", "gemini")
STRICT_FORMATS = ("openai", "openai-responses")


def add_tools_arguments(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)
    parser.add_argument("--format", choices=FORMAT_NAMES, default="openai",
                        help="openai (Chat Completions), openai-responses, anthropic or gemini (default openai)")
    parser.add_argument("--strict", action="store_true",
                        help="OpenAI strict mode: schemas converted so that strict: true accepts them")


def run_tools_command(args: argparse.Namespace) -> int:
    from ..functions import SchemaConversionError, ToolBridge

    if args.strict and args.format not in STRICT_FORMATS:
        raise CommandError(f"--strict is OpenAI's strict mode (formats openai, openai-responses), not {args.format}'s")
    reporter = StderrReporter()

    async def main() -> int:
        async with session_for(args, reporter) as session:
            bridge = await ToolBridge.from_sessions({SERVER_NAME: session})
        try:
            if args.format == "gemini":
                tools = bridge.gemini_tools()
            else:
                tools = bridge.definitions(args.format, strict=args.strict)
        except SchemaConversionError as exc:
            hint = " (leave out --strict to export it as it is)" if args.strict else ""
            raise CommandError(f"{exc}{hint}", code=TOOL_ERROR) from None
        print(json.dumps(tools, indent=2, ensure_ascii=False))  # stdout-ok: the CLI's own output
        return OK

    return anyio.run(main)
