"""Assembling the filesystem server: settings, tools (read-only or all), resources, audit log."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from mcp_kit import MCPServer

from .config import DEFAULT_MAX_ENTRIES, DEFAULT_MAX_READ_BYTES, Settings
from .resources import register_resources
from .sandbox import Sandbox
from .tools_read import register_read_tools
from .tools_write import register_write_tools
from .watch import DirectoryWatch

INSTRUCTIONS = (
    "Reads, searches and (unless read-only) edits files inside a fixed set of allowed directories; "
    "call list_allowed_directories first. Paths outside them, including through symbolic links, are refused. "
    "Prefer edit_file (with dryRun to preview) over rewriting whole files."
)


def build_server(
    roots: Iterable[str | os.PathLike[str]],
    read_only: bool = False,
    confirm_writes: bool = False,
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    audit_log: str | None = None,
) -> MCPServer:
    """A filesystem server confined to `roots` (which must exist; raises ValueError otherwise)."""
    if max_read_bytes < 1 or max_entries < 1:
        raise ValueError("max_read_bytes and max_entries must be positive")
    settings = Settings(
        sandbox=Sandbox(roots),
        read_only=read_only,
        confirm_writes=confirm_writes,
        max_read_bytes=max_read_bytes,
        max_entries=max_entries,
    )
    watch = DirectoryWatch()  # one watch for every subscribed file, running with the server
    app = MCPServer(
        "filesystem", version="1.0.0", title="Filesystem", instructions=INSTRUCTIONS, lifespan=watch.running
    )
    register_read_tools(app, settings)
    if not read_only:
        register_write_tools(app, settings)
    register_resources(app, settings, watch)
    if audit_log:
        # the trail must not be readable or editable through the tools it records
        log_dir = Path(os.path.realpath(os.path.dirname(os.path.abspath(audit_log))))
        if settings.sandbox.contains(log_dir / os.path.basename(audit_log)):
            raise ValueError(f"the audit log {audit_log} must be outside the allowed directories")
        app.enable_audit_log(audit_log)
    return app
