"""`mcp-kit tools TARGET --format openai|openai-responses|anthropic|gemini [--strict]`: function definitions.

Prints, as JSON, what goes in the `tools` field of a request to that API for every tool of the server.
A schema that cannot be exported (with --strict: one OpenAI strict mode cannot express) is an error naming
the tool and the JSON Pointer of the part, exit status 1.
"""

from __future__ import annotations

import argparse
import json

import anyio

from ..functions import SchemaConversionError, ToolBridge
from ..functions.vendors import FORMATS
from .exit_codes import OK, TOOL_ERROR, CommandError
from .progress import StderrReporter
from .talk import add_target_arguments, session_for

SERVER_NAME = "server"


def add_tools_arguments(parser: argparse.ArgumentParser) -> None:
    add_target_arguments(parser)
    parser.add_argument("--format", choices=list(FORMATS), default="openai",
                        help="openai (Chat Completions), openai-responses, anthropic or gemini (default openai)")
    parser.add_argument("--strict", action="store_true",
                        help="OpenAI strict mode: schemas converted so that strict: true accepts them")


def run_tools_command(args: argparse.Namespace) -> int:
    if args.strict and not FORMATS[args.format].supports_strict:
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
