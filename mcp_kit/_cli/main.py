"""The `mcp-kit` command: run a server, talk to any server, set up Claude Desktop or Cursor.

    mcp-kit run MODULE_OR_PATH[:ATTR] [--transport stdio|http|sse] [--host H] [--port P] ...
    mcp-kit proxy [run options] [--scope-map PATTERN=SCOPE,...] (URL | CONFIG.json | -- COMMAND [ARG ...])
    mcp-kit list   TARGET
    mcp-kit call   TARGET TOOL [key=value ...] [--json ['{...}']]
    mcp-kit read   TARGET URI
    mcp-kit prompt TARGET NAME [key=value ...]
    mcp-kit tools  TARGET [--format openai|openai-responses|anthropic|gemini] [--strict]
    mcp-kit install CLIENT TARGET|-m MODULE [--env K=V] [--name N] [--project DIR] [--dry-run] [-- SERVER_ARGS]
    mcp-kit dev    TARGET [--inspector] [--watch DIR] [-- SERVER_ARGS]
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
from . import exit_codes
from .arguments import json_after_flag
from .client_config import CLIENTS, REFERENCE_SERVERS, config_command
from .clients import CLIENTS as INSTALL_CLIENTS
from .dev import add_dev_arguments, run_dev_command
from .exit_codes import CommandError
from .function_tools import add_tools_arguments, run_tools_command
from .install import InstallOptions, add_install_arguments, install_command, run_install_command
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

    proxy = commands.add_parser(
        "proxy", help="serve another MCP server (stdio command, URL, or client config) through mcp_kit",
        description="Serve the MCP server(s) at TARGET over any mcp_kit transport and era, behind its "
                    "pipeline and OAuth: a command line after --, an http(s):// URL (Streamable HTTP, falling "
                    "back to legacy SSE), or a client-config JSON naming several servers (each under its name).")
    proxy.add_argument("target", nargs="+", metavar="TARGET", help="URL, CONFIG.json, or -- COMMAND [ARG ...]")
    proxy.add_argument("--scope-map", action="append", default=[], metavar="PATTERN=SCOPE[,SCOPE]",
                       help="OAuth scopes a proxied tool, prompt or resource needs (fnmatch on its name or URI; "
                            "repeatable), e.g. 'write_*=files:write'")
    proxy.add_argument("--name", default="mcp-kit-proxy", help="the proxy's server name (default: mcp-kit-proxy)")
    proxy.add_argument("--upstream-timeout", type=float, default=600.0, metavar="SECONDS",
                       help="how long a request may wait for the upstream's answer (default 600)")
    add_run_arguments(proxy)

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

    add_install_arguments(commands)
    add_dev_arguments(commands)

    config = commands.add_parser(
        "config", help="print or write client entries (install, printing unless --write)",
        description="Print the config entries that start the reference servers (or any server `install` takes) "
                    "with this Python, or merge them into the client's config file with --write (other entries "
                    "kept, file backed up first).")
    config.add_argument("client", choices=[*CLIENTS, *(name for name in INSTALL_CLIENTS if name not in CLIENTS)])
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
    apps = commands.add_parser("apps", help="MCP Apps: preview a server's views in a browser")
    apps_commands = apps.add_subparsers(dest="apps_command", required=True, metavar="APPS_COMMAND")
    preview = apps_commands.add_parser(
        "preview", help="serve a local page that renders the server's views through the Apps host protocol",
        description="Load the MCPServer in a module or file, connect to it as a host that renders MCP Apps, and "
                    "serve a page on loopback listing its views; each renders in a sandboxed iframe.")
    preview.add_argument("spec", metavar="MODULE_OR_PATH[:ATTR]", help="e.g. servers.stock, ./server.py:app")
    preview.add_argument("--host", default="127.0.0.1", help="loopback address to serve on (default 127.0.0.1)")
    preview.add_argument("--port", type=int, default=8765, help="the page's port (0: any free port; default 8765)")
    preview.add_argument("--sandbox-port", type=int, default=0,
                         help="the sandbox proxy's port, another origin (default: any free port)")

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
    if any(isinstance(action, argparse._SubParsersAction) for action in commands.choices[command]._actions):
        return parser.parse_args(argv)  # `apps preview ...`: argparse cannot read subcommands intermixed
    args = commands.choices[command].parse_intermixed_args(argv[index + 1:])
    args.command = command
    return args


def dispatch(args: argparse.Namespace) -> int:
    if args.command == "run":
        from .loader import load_server

        load_server(args.spec).run_from_args(args)
        return exit_codes.OK
    if args.command == "proxy":
        from .._serving.server import MCPServer

        target = args.target[0] if len(args.target) == 1 else args.target
        MCPServer.proxy(target, name=args.name, scope_map=scope_map_of(args.scope_map),
                        timeout=args.upstream_timeout).run_from_args(args)
        return exit_codes.OK
    if args.command == "config":
        if args.client not in CLIENTS or any(_names_a_target(name) for name in args.servers):
            return config_through_install(args)
        return config_command(args.client, args.servers, write=args.write, project=args.project,
                              override=args.config_path, fs_roots=args.root, provider=args.provider)
    if args.command == "tools":
        return run_tools_command(args)
    if args.command == "install":
        return run_install_command(args)
    if args.command == "dev":
        return run_dev_command(args)
    if args.command == "apps":
        from .apps_preview import preview_command

        return preview_command(args.spec, args.host, args.port, args.sandbox_port)
    if args.command == "check":
        from .check import check_command

        return check_command(args.spec)
    return run_talk_command(args)


def _names_a_target(name: str) -> bool:
    """A script, module, `module:app` or URL (a bare word stays a reference server's name, checked as such)."""
    return name not in REFERENCE_SERVERS and any(mark in name for mark in (".", "/", ":", os.sep))


def config_through_install(args: argparse.Namespace) -> int:
    """`config CLIENT SERVER...` for the clients and servers `install` knows: `install --dry-run`, or
    `install` with --write, once per server."""
    names = args.servers or [name for name in REFERENCE_SERVERS if name != "filesystem" or args.root]
    for name in names:
        code = install_command(InstallOptions(client=args.client, target=name, project=args.project,
                                              config_path=args.config_path, dry_run=not args.write,
                                              fs_roots=args.root, provider=args.provider,
                                              rerun="run again with --write"))
        if code:
            return code
    return exit_codes.OK


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `mcp-kit` console script; returns (and exits with) the exit status."""
    raw = list(sys.argv[1:] if argv is None else argv)
    raw, server_args = split_server_args(raw)
    parser = build_parser()
    if raw and raw[0] in ("install", "dev", "proxy"):  # TARGET after options; proxy's `-- COMMAND ...` as given
        args, extras = parser.parse_known_args(json_after_flag(raw))
        if extras and getattr(args, "target", "") is None and len(extras) == 1 and not extras[0].startswith("-"):
            args.target = extras[0]  # `install CLIENT --env K=V TARGET`: TARGET after an option
        elif extras:
            parser.error(f"unrecognized arguments: {' '.join(extras)}")
    else:
        args = parse_arguments(parser, json_after_flag(raw))
    args.server_args = server_args
    if args.command not in ("run", "proxy"):  # a server (run, proxy) logs as any server does (its endpoints included)
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="mcp-kit: warning: %(message)s")
    try:
        code = dispatch(args)
    except CommandError as exc:
        code = _fail(str(exc), exc.code)
    except MCPError as exc:
        code = _fail(f"{exc.message} (JSON-RPC error {exc.code})", exit_codes.PROTOCOL_ERROR)
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


def split_server_args(raw: list[str]) -> tuple[list[str], list[str]]:
    """`mcp-kit install|dev ... -- ARGS`: what follows `--` goes to the server's own command line."""
    if raw and raw[0] in ("install", "dev") and "--" in raw:
        cut = raw.index("--")
        return raw[:cut], raw[cut + 1:]
    return raw, []


def scope_map_of(entries: list[str]) -> dict[str, list[str]]:
    """`--scope-map PATTERN=SCOPE[,SCOPE]` entries as {pattern: [scope, ...]}."""
    mapping: dict[str, list[str]] = {}
    for entry in entries:
        pattern, sep, scopes = entry.partition("=")
        names = [scope for scope in scopes.replace(" ", ",").split(",") if scope]
        if not sep or not pattern or not names:
            raise ValueError(f"--scope-map takes PATTERN=SCOPE[,SCOPE...], e.g. 'write_*=files:write'; got {entry!r}")
        mapping.setdefault(pattern, []).extend(names)
    return mapping


def _fail(message: str, code: int) -> int:
    print(f"mcp-kit: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    main()
