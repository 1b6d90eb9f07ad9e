"""`mcp-kit tools TARGET --format openai|openai-responses|anthropic|gemini [--strict]`: function definitions.

Prints, as JSON, what goes in the `tools` field of a request to that API for every tool of the server.
A schema that cannot be exported (with --strict: one OpenAI strict mode cannot express) is an error naming
the tool and the JSON Pointer of the part, exit status 1; with --strict-auto such a tool is exported
non-strict instead. Every tool left out (a malformed one), renamed (a name collision) or exported non-strict
is noted on stderr with the reason; stdout carries only the definitions.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Literal

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
    strictness = parser.add_mutually_exclusive_group()
    strictness.add_argument("--strict", action="store_true",
                            help="OpenAI strict mode: schemas converted so that strict: true accepts them")
    strictness.add_argument("--strict-auto", action="store_true",
                            help="strict mode for each tool whose schema it can express, the others non-strict "
                                 "(each noted on stderr)")


def run_tools_command(args: argparse.Namespace) -> int:
    from ..functions import SchemaConversionError, ToolBridge

    if (args.strict or args.strict_auto) and args.format not in STRICT_FORMATS:
        flag = "--strict" if args.strict else "--strict-auto"
        raise CommandError(f"{flag} is OpenAI's strict mode (formats openai, openai-responses), not {args.format}'s")
    strict: bool | Literal["auto"] = "auto" if args.strict_auto else bool(args.strict)
    reporter = StderrReporter()

    async def main() -> int:
        async with session_for(args, reporter) as session:
            bridge = await ToolBridge.from_sessions({SERVER_NAME: session})
        try:
            export = bridge.export(args.format, strict=strict)
        except SchemaConversionError as exc:
            hint = (" (leave out --strict to export it as it is); --strict-auto exports only such tools non-strict"
                    if args.strict else "")
            raise CommandError(f"{exc}{hint}", code=TOOL_ERROR) from None
        for note in export.notes:
            sys.stderr.write(f"mcp-kit: note: {note}\n")
        tools = [{"functionDeclarations": export.definitions}] if args.format == "gemini" else export.definitions
        print(json.dumps(tools, indent=2, ensure_ascii=False))  # stdout-ok: the CLI's own output
        return OK

    return anyio.run(main)
