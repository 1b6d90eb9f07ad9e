"""Command line: `python -m servers.filesystem [--root] DIR ... [--read-only] [--confirm-writes] ...`.

Over HTTP with OAuth (`--oauth-issuer`, `--oauth-resource`) every request needs the scope
`files:read` unless `--oauth-scopes` (or MCP_OAUTH_SCOPES) says otherwise; the tools that change
files need `files:write` as well (the reading tools and the file resource declare `files:read`).
"""

from __future__ import annotations

import argparse
import os

from mcp_kit import add_run_arguments

from .config import DEFAULT_MAX_ENTRIES, DEFAULT_MAX_READ_BYTES, READ_SCOPE, WRITE_SCOPE
from .server import build_server


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, list[str]]:
    """Parse the command line; the allowed directories are returned separately."""
    parser = argparse.ArgumentParser(
        prog="python -m servers.filesystem",
        description="MCP server giving access to files inside the allowed directories, and nothing else.",
    )
    parser.add_argument("dirs", nargs="*", metavar="DIR", help="an allowed directory")
    parser.add_argument("--root", action="append", default=[], metavar="DIR",
                        help="an allowed directory (repeatable; same as the positional form)")
    parser.add_argument("--read-only", action="store_true", help="do not even register the tools that change files")
    parser.add_argument("--confirm-writes", action="store_true",
                        help="ask the user (elicitation) before every write, edit or move")
    parser.add_argument("--audit-log", metavar="PATH", help="append one JSON line per tool call to PATH")
    parser.add_argument("--max-read-bytes", type=int, default=DEFAULT_MAX_READ_BYTES,
                        help=f"most bytes a read returns (default {DEFAULT_MAX_READ_BYTES})")
    parser.add_argument("--max-entries", type=int, default=DEFAULT_MAX_ENTRIES,
                        help=f"most entries in a listing, tree or search (default {DEFAULT_MAX_ENTRIES})")
    add_run_arguments(parser)
    if not os.environ.get("MCP_OAUTH_SCOPES"):  # with OAuth, reading is the least every caller needs
        parser.set_defaults(oauth_scopes=[READ_SCOPE])
    parser.epilog = (f"With OAuth (--oauth-issuer, --oauth-resource), every request needs the scope {READ_SCOPE} "
                     f"(default of --oauth-scopes here); the tools that change files need {WRITE_SCOPE} as well.")
    args = parser.parse_args(argv)
    roots = [*args.dirs, *args.root]
    if not roots:
        parser.error("at least one allowed directory is required (DIR or --root DIR)")
    return args, roots


def main(argv: list[str] | None = None) -> None:
    """Build the server from the command line and serve it."""
    args, roots = parse_args(argv)
    try:
        app = build_server(roots, read_only=args.read_only, confirm_writes=args.confirm_writes,
                           max_read_bytes=args.max_read_bytes, max_entries=args.max_entries,
                           audit_log=args.audit_log)
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None
    app.run_from_args(args)


if __name__ == "__main__":
    main()
