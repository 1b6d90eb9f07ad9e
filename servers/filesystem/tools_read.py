"""The read-only tools: reading files, listing and searching directories, metadata."""

from __future__ import annotations

import base64
import os
from typing import Annotated, Literal

from pydantic import Field

from mcp_kit import Audio, BlobResourceContents, Context, Image, MCPServer, ToolError

from . import operations as ops
from .config import READ_SCOPE, Settings, guarded, run_io, run_walk
from .formatting import listing_text, sized_listing_text
from .models import AllowedDirectories, DirectoryTree, Excludes, FileInfo, PathArg, SearchResult
from .names import display_path
from .sandbox import Sandbox
from .uris import file_uri


def register_read_tools(app: MCPServer, settings: Settings) -> None:
    """Register every read-only tool on `app`."""

    async def read_text_file(
        path: PathArg,
        ctx: Context,
        head: Annotated[int | None, Field(ge=0, description="Return only the first N lines")] = None,
        tail: Annotated[int | None, Field(ge=0, description="Return only the last N lines")] = None,
    ) -> str:
        """Read a UTF-8 text file, whole or its first/last lines.

        At most the configured number of bytes is returned, with a note when the file is longer.
        Binary or non-UTF-8 files are refused with a hint to use read_media_file.
        """
        sp = await settings.resolve(ctx, path)
        read = await run_io(ops.read_text, sp, settings.max_read_bytes, head, tail)
        return read.with_note()

    app.add_tool(read_text_file, title="Read text file", read_only=True, open_world=False, scopes=[READ_SCOPE])
    app.add_tool(
        read_text_file,
        name="read_file",
        title="Read file (deprecated)",
        read_only=True,
        open_world=False,
        scopes=[READ_SCOPE],
        description="Deprecated alias of read_text_file: read a UTF-8 text file, whole or its first/last lines.",
    )

    @app.tool(title="Read media file", structured_output=False, read_only=True, open_world=False, scopes=[READ_SCOPE])
    async def read_media_file(path: PathArg, ctx: Context) -> Image | Audio | BlobResourceContents:
        """Read a file as base64 with its MIME type: images and audio as such, anything else as an embedded blob."""
        sp = await settings.resolve(ctx, path)
        data = await run_io(ops.read_bytes, sp, settings.max_read_bytes)
        mime = ops.guess_mime_type(sp.path)
        if mime.startswith("image/"):
            return Image(data=data, mime_type=mime)
        if mime.startswith("audio/"):
            return Audio(data=data, mime_type=mime)
        return BlobResourceContents(uri=file_uri(sp.path), mime_type=mime, blob=base64.b64encode(data).decode())

    @app.tool(title="Read multiple files", read_only=True, open_world=False, scopes=[READ_SCOPE])
    async def read_multiple_files(
        paths: Annotated[list[str], Field(min_length=1, description="Paths of the files to read")],
        ctx: Context,
    ) -> str:
        """Read several text files at once; a file that cannot be read is reported without failing the others."""
        sandbox = await settings.sandbox_for(ctx)
        return await run_io(_read_many, sandbox, paths, settings.max_read_bytes)

    @app.tool(title="List directory", read_only=True, open_world=False, scopes=[READ_SCOPE])
    async def list_directory(path: PathArg, ctx: Context) -> str:
        """List a directory's entries, one a line, marked [DIR], [FILE] or [LINK].

        Names that are not valid UTF-8, or contain a control character or a backslash, are shown escaped
        (bad\\xff.txt for the byte 0xFF); pass them back exactly as shown. Long listings end with a note.
        """
        sp = await settings.resolve(ctx, path)
        return listing_text(await run_walk(ops.list_directory, sp, settings.max_entries))

    @app.tool(title="List directory with sizes", read_only=True, open_world=False, scopes=[READ_SCOPE])
    async def list_directory_with_sizes(
        path: PathArg,
        ctx: Context,
        sortBy: Annotated[
            Literal["name", "size"], Field(description="Sort by name or by size (largest first)")
        ] = "name",
    ) -> str:
        """List a directory's entries with file sizes and totals (names shown as list_directory shows them)."""
        sp = await settings.resolve(ctx, path)
        return sized_listing_text(await run_walk(ops.list_directory, sp, settings.max_entries), sortBy)

    @app.tool(title="Directory tree", read_only=True, open_world=False, scopes=[READ_SCOPE], task="optional")
    async def directory_tree(path: PathArg, ctx: Context, excludePatterns: Excludes = []) -> DirectoryTree:  # noqa: B006
        """The recursive tree of a directory: each entry has name, type (file/directory) and, for directories, children.

        Linked directories are shown but not descended into; links leading outside the allowed directories are left out.
        Names are shown as list_directory shows them. The tree is bounded (entries, entries visited, depth);
        when it is cut, truncated is true and note says where.

        On a large tree it can run as a task when the client supports tasks: the call answers at once with a task
        id to poll, and cancelling the task stops the walk.
        """
        sp = await settings.resolve(ctx, path)
        walk = await run_walk(ops.directory_tree, sp, excludePatterns, settings.max_entries)
        return DirectoryTree(path=sp.display, tree=walk.entries, truncated=walk.incomplete, note=walk.note())

    @app.tool(title="Search files", read_only=True, open_world=False, scopes=[READ_SCOPE], task="optional")
    async def search_files(
        path: PathArg,
        pattern: Annotated[
            str, Field(description="Glob: *.py matches names at any depth, src/**/*.ts matches relative paths")
        ],
        ctx: Context,
        excludePatterns: Excludes = [],  # noqa: B006
    ) -> SearchResult:
        """Find files and directories below a path whose name or relative path matches a glob pattern.

        Shallower matches come first. The search is bounded (matches and entries visited); when it stops early,
        truncated is true and note says why. Matched paths show names as list_directory shows them.

        On a large tree it can run as a task when the client supports tasks: the call answers at once with a task
        id to poll, and cancelling the task stops the search.
        """
        sp = await settings.resolve(ctx, path)
        walk = await run_walk(ops.search, sp, pattern, excludePatterns, settings.max_entries)
        return SearchResult(matches=list(walk.entries), truncated=walk.incomplete, note=walk.note())

    @app.tool(title="Get file info", read_only=True, open_world=False, scopes=[READ_SCOPE])
    async def get_file_info(path: PathArg, ctx: Context) -> FileInfo:
        """Size, times, type and permissions of a file or directory, without reading it."""
        sp = await settings.resolve(ctx, path)
        return FileInfo.model_validate(await run_io(ops.file_info, sp))

    @app.tool(title="List allowed directories", read_only=True, open_world=False, scopes=[READ_SCOPE])
    async def list_allowed_directories(ctx: Context) -> AllowedDirectories:
        """The directories this server may access (subdirectories included)."""
        sandbox = await settings.sandbox_for(ctx)
        note = None
        if sandbox is not settings.sandbox:
            note = "Narrowed to the roots offered by the client, within the directories the server was started with."
        return AllowedDirectories(directories=[display_path(str(root), os.sep) for root in sandbox.roots], note=note)


def _read_many(sandbox: Sandbox, paths: list[str], budget: int) -> str:
    """Read each path in turn within a shared byte budget; errors are reported per file."""
    parts = []
    for path in paths:
        if budget <= 0:
            parts.append(f"{path}: Error - skipped: the read limit was reached; read it separately")
            continue
        try:
            sp = guarded(sandbox.resolve, path)
            read = guarded(ops.read_text, sp, budget)
        except ToolError as exc:  # refused or unreadable: report it for this file only
            parts.append(f"{path}: Error - {exc}")
            continue
        budget -= len(read.text.encode("utf-8"))
        parts.append(f"{path}:\n{read.with_note()}\n")
    return "\n---\n".join(parts)

