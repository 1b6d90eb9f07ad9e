"""`mcp-kit list|call|read|prompt TARGET ...`: talk to any MCP server and print what it says."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from .._protocol.errors import MCPError
from .._protocol.jsonrpc import METHOD_NOT_FOUND
from . import render
from .arguments import collect
from .exit_codes import CONNECTION_ERROR, OK, TOOL_ERROR, CommandError
from .oauth_options import add_oauth_client_arguments, oauth_from_args
from .progress import StderrReporter

if TYPE_CHECKING:
    from ..client import ClientSession

LIST_SECTIONS = (("tools", "tools", "list_tools"), ("resources", "resources", "list_resources"),
                 ("resourceTemplates", "resources", "list_resource_templates"), ("prompts", "prompts", "list_prompts"))


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """TARGET and the options every talking command shares."""
    parser.add_argument(
        "target",
        metavar="TARGET",
        help='the server: a command line in one quoted string ("python -m servers.stock --provider '
        'sample"), or an http(s) URL (Streamable HTTP; legacy HTTP+SSE when the path ends in /sse)',
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="how long to wait for each answer (default 60)")
    parser.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                        help="an HTTP header to send (repeatable)")
    parser.add_argument("--auth-token", metavar="TOKEN", help="send 'Authorization: Bearer TOKEN' (HTTP)")
    parser.add_argument("--show-stderr", action="store_true",
                        help="pass the stdio server's stderr through (by default only its tail is shown on failure)")
    parser.add_argument("--log-level", metavar="LEVEL",
                        help="ask the server for log messages from LEVEL up (debug, info, warning, error, ...)")
    add_oauth_client_arguments(parser)


def http_headers(args: argparse.Namespace) -> dict[str, str]:
    headers: dict[str, str] = {}
    for header in args.header:
        name, sep, value = header.partition(":")
        if not sep:
            raise ValueError(f"--header expects 'NAME: VALUE', got {header!r}")
        headers[name.strip()] = value.strip()
    if args.auth_token:
        headers["Authorization"] = f"Bearer {args.auth_token}"
    return headers


@contextlib.asynccontextmanager
async def session_for(args: argparse.Namespace, reporter: StderrReporter) -> AsyncIterator[ClientSession]:
    """Connect to TARGET with log messages (and, if asked, the server's stderr) on our stderr.

    The client (and httpx with it) is imported here, by the commands that talk to a server only; its
    errors leave as a `CommandError` with the connection-error exit status.
    """
    from ..client import ClientError, connect, is_url

    headers = http_headers(args) if is_url(args.target) else None
    auth = oauth_from_args(args, args.target.strip(), headers) if headers is not None else None
    on_stderr = (lambda line: reporter.line(f"server: {line}")) if args.show_stderr else None
    try:
        async with connect(args.target, timeout=args.timeout, headers=headers, on_stderr=on_stderr, auth=auth,
                           on_log=lambda params: reporter.line(render.log_line(params))) as session:
            if args.log_level and "logging" in session.server_capabilities:
                await session.set_level(args.log_level)
            yield session
    except ClientError as exc:
        raise CommandError(str(exc), CONNECTION_ERROR) from exc
    finally:
        if auth is not None:
            await auth.aclose()


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else text)  # stdout-ok: the CLI's own output


async def list_command(args: argparse.Namespace, session: ClientSession, reporter: StderrReporter) -> int:
    sections: dict[str, list[dict[str, Any]]] = {}
    capabilities = session.server_capabilities
    for key, capability, method in LIST_SECTIONS:
        if capability not in capabilities:
            continue
        try:
            sections[key] = await getattr(session, method)()
        except MCPError as exc:
            if exc.code != METHOD_NOT_FOUND:
                raise
    emit(args, {"server": session.initialize_result, **sections}, render.listing(session.initialize_result, sections))
    return OK


async def call_command(args: argparse.Namespace, session: ClientSession, reporter: StderrReporter) -> int:
    try:
        result = await session.call_tool(args.tool, args.arguments, on_progress=reporter.progress)
    finally:
        reporter.end_bar()
    failed = bool(result.get("isError"))
    if args.json:
        emit(args, result, "")
    elif failed:
        print(f"error: {render.tool_result(result)}", file=sys.stderr)  # stdout-ok: the CLI's own output
    else:
        print(render.tool_result(result))  # stdout-ok: the CLI's own output
    return TOOL_ERROR if failed else OK


async def read_command(args: argparse.Namespace, session: ClientSession, reporter: StderrReporter) -> int:
    result = await session.request("resources/read", {"uri": args.uri})
    emit(args, result, render.resource_contents(result.get("contents") or []))
    return OK


async def prompt_command(args: argparse.Namespace, session: ClientSession, reporter: StderrReporter) -> int:
    result = await session.get_prompt(args.name, args.arguments)
    emit(args, result, render.prompt_result(result))
    return OK


Command = Callable[[argparse.Namespace, "ClientSession", StderrReporter], Awaitable[int]]
COMMANDS: dict[str, Command] = {"list": list_command, "call": call_command, "read": read_command,
                                "prompt": prompt_command}


def run_talk_command(args: argparse.Namespace) -> int:
    """Connect, run the command, disconnect; errors propagate to the caller (`mcp_kit._cli.main`) to report."""
    command = COMMANDS[args.command]
    if args.command in ("call", "prompt"):  # bad arguments fail before a server is started
        args.arguments = collect(args.pairs, args.args, as_json=args.command == "call")
    reporter = StderrReporter()

    async def main() -> int:
        async with session_for(args, reporter) as session:
            return await command(args, session, reporter)

    return anyio.run(main)
