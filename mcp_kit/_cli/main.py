"""The `mcp-kit` command: run a server, talk to any server, set up Claude Desktop or Cursor.

    mcp-kit run MODULE_OR_PATH[:ATTR] [--transport stdio|http|sse] [--host H] [--port P] ...
    mcp-kit list   TARGET
    mcp-kit call   TARGET TOOL [key=value ...] [--json ['{...}']]
    mcp-kit read   TARGET URI
    mcp-kit prompt TARGET NAME [key=value ...]
    mcp-kit tools  TARGET [--format openai|openai-responses|anthropic|gemini] [--strict]
    mcp-kit config claude|cursor [SERVER ...] [--write] [--project DIR] [--root DIR] [--config-path FILE]
    mcp-kit check  MODULE_OR_PATH[:ATTR]

Options may come anywhere after the command, between its positional arguments too
(`mcp-kit call T TOOL --timeout 5 key=value`).

Exit status: 0 success, 1 a tool reported isError (or a config file could not be updated, or a tool's
schema could not be exported),
2 bad usage, 3 the server answered with a JSON-RPC error, 4 the server could not be started or
reached or went away, 130 interrupted.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from .. import __version__
from .._protocol.errors import MCPError
from .._serving.serve import DefaultsHelpFormatter, add_run_arguments
from ..client import ClientError
from . import exit_codes
from .arguments import json_after_flag
from .client_config import CLIENTS, REFERENCE_SERVERS, config_command
from .exit_codes import CommandError
from .function_tools import add_tools_arguments, run_tools_command
from .talk import add_target_arguments, run_talk_command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-kit", description="Run MCP servers and talk to any MCP server.",
                                     epilog="Exit status: 0 ok, 1 tool error (isError), 2 usage, 3 JSON-RPC error, "
                                            "4 cannot start/reach the server.", formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mcp-kit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plain_add_parser = commands.add_parser

    def add_parser(name: str, **options: Any) -> argparse.ArgumentParser:
        return plain_add_parser(name, formatter_class=DefaultsHelpFormatter, **options)

    commands.add_parser = add_parser  # type: ignore[method-assign]  # every subcommand's --help shows defaults

    run = commands.add_parser("run", help="run an mcp_kit server", description="Run the MCPServer found in a module "
                              "or file: its `app` (or `server`, `mcp`), a factory without arguments such as "
                              "build_server(), or the attribute named after a colon.")
    run.add_argument("spec", metavar="MODULE_OR_PATH[:ATTR]", help="e.g. myserver, pkg.module:app, ./server.py:app")
    add_run_arguments(run)

    listing = commands.add_parser("list", help="list a server's tools, resources, templates and prompts")
    add_target_arguments(listing)

    call = commands.add_parser(
        "call",
        help="call a tool",
        description="Call a tool. Arguments are key=value pairs (values are JSON when they "
        'parse: n=3, flag=true, tickers=\'["AAPL","MSFT"]\'; else strings), or one '
        "JSON object after --json, which also prints the result as JSON.",
    )
    add_target_arguments(call)
    call.add_argument("tool", metavar="TOOL")
    call.add_argument("pairs", nargs="*", metavar="key=value")
    call.add_argument("--args", metavar="JSON", help="the arguments as one JSON object")

    read = commands.add_parser("read", help="read a resource")
    add_target_arguments(read)
    read.add_argument("uri", metavar="URI")

    prompt = commands.add_parser("prompt", help="get a prompt")
    add_target_arguments(prompt)
    prompt.add_argument("name", metavar="NAME")
    prompt.add_argument("pairs", nargs="*", metavar="key=value", help="prompt arguments (strings)")
    prompt.add_argument("--args", metavar="JSON", help="the arguments as one JSON object")

    tools = commands.add_parser(
        "tools",
        help="print a server's tools as OpenAI, Anthropic or Gemini function definitions",
        description="Print the server's tools as JSON, ready for the `tools` field of a "
        "request to that API (names made valid for it; with --strict, schemas "
        "converted for OpenAI strict mode).",
    )
    add_tools_arguments(tools)

    config = commands.add_parser(
        "config", help="print or write Claude Desktop / Cursor entries for the reference servers",
        description="Print the config entries that start the reference servers with this Python, or merge them "
                    "into the client's config file with --write (other entries kept, file backed up first).")
    config.add_argument("client", choices=CLIENTS)
    config.add_argument("servers", nargs="*", metavar="SERVER",
                        help=f"any of {', '.join(REFERENCE_SERVERS)} (default: all; filesystem only with --root)")
    config.add_argument("--write", action="store_true", help="merge into the config file instead of printing")
    config.add_argument("--project", type=Path, metavar="DIR", help="cursor: write DIR/.cursor/mcp.json")
    config.add_argument("--config-path", type=Path, metavar="FILE", help="use this config file instead")
    config.add_argument("--root", type=Path, action="append", default=[], metavar="DIR",
                        help="a directory the filesystem server may read and write (repeatable); without one "
                             "the filesystem server is left out")
    config.add_argument("--provider", choices=["live", "sample"],
                        help="data provider for stock and weather (default: their own default, live)")

    check = commands.add_parser(
        "check", help="build every schema, template and prompt of a server and report every problem",
        description="Import the server as `run` would, build what tools/list, tools/call, the template and prompt "
                    "lists need for each primitive, and print every problem with the file and line of its "
                    "function. Exit status 0 when there is none, 1 otherwise.")
    check.add_argument("spec", metavar="MODULE_OR_PATH[:ATTR]", help="e.g. myserver, pkg.module:app, ./server.py")
    return parser


def parse_arguments(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """`argv` parsed with options allowed between positional arguments, for every subcommand.

    argparse's `parse_intermixed_args` cannot take subcommands, so the command is found first and its own
    parser reads the rest intermixed.
    """
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    index = next((i for i, token in enumerate(argv) if not token.startswith("-")), None)
    if index is None or argv[index] not in commands.choices or argv[:index]:
        return parser.parse_args(argv)  # -h, --version, no or an unknown command: argparse says what is wrong
    command = argv[index]
    args = commands.choices[command].parse_intermixed_args(argv[index + 1:])
    args.command = command
    return args


def dispatch(args: argparse.Namespace) -> int:
    if args.command == "run":
        from .loader import load_server

        load_server(args.spec).run_from_args(args)
        return exit_codes.OK
    if args.command == "config":
        return config_command(args.client, args.servers, write=args.write, project=args.project,
                              override=args.config_path, fs_roots=args.root, provider=args.provider)
    if args.command == "tools":
        return run_tools_command(args)
    if args.command == "check":
        from .check import check_command

        return check_command(args.spec)
    return run_talk_command(args)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `mcp-kit` console script; returns (and exits with) the exit status."""
    raw = list(sys.argv[1:] if argv is None else argv)
    args = parse_arguments(build_parser(), json_after_flag(raw))
    if args.command != "run":  # a server run by `mcp-kit run` logs as any server does (its endpoints included)
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="mcp-kit: warning: %(message)s")
    try:
        code = dispatch(args)
    except CommandError as exc:
        code = _fail(str(exc), exc.code)
    except MCPError as exc:
        code = _fail(f"{exc.message} (JSON-RPC error {exc.code})", exit_codes.PROTOCOL_ERROR)
    except ClientError as exc:
        code = _fail(str(exc), exit_codes.CONNECTION_ERROR)
    except TimeoutError as exc:
        code = _fail(str(exc) or "timed out", exit_codes.CONNECTION_ERROR)
    except ValueError as exc:
        code = _fail(str(exc), exit_codes.USAGE)
    except KeyboardInterrupt:
        code = exit_codes.INTERRUPTED
    except BrokenPipeError:  # e.g. `mcp-kit list ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = exit_codes.BROKEN_PIPE
    if argv is None:
        sys.exit(code)
    return code


def _fail(message: str, code: int) -> int:
    print(f"mcp-kit: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    main()
