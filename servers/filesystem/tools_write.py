"""The tools that change files: write, edit, create directories, move. Not registered with --read-only."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcp_kit import Context, MCPServer

from . import operations as ops
from .config import MAX_EDIT_BYTES, WRITE_SCOPE, Settings, run_io
from .confirm import confirm_change
from .errors import FilesystemError
from .models import EditOperation, PathArg
from .sandbox import SandboxedPath


def register_write_tools(app: MCPServer, settings: Settings) -> None:
    """Register the tools that modify the file system."""

    @app.tool(title="Write file", read_only=False, destructive=True, idempotent=True,
              open_world=False, scopes=[WRITE_SCOPE])
    async def write_file(
        path: PathArg, content: Annotated[str, Field(description="The complete new text")], ctx: Context
    ) -> str:
        """Create a file or replace its whole content (atomically: readers never see a half-written file)."""
        sp = await settings.resolve(ctx, path)
        size = len(content.encode("utf-8"))
        if settings.confirm_writes:
            verb = "Overwrite" if await run_io(sp.exists) else "Create"
            await confirm_change(ctx, True, f"{verb} {sp.display} with {size} bytes of new content?")
        await run_io(ops.atomic_write, sp, content.encode("utf-8"))
        return f"Successfully wrote to {path}"

    @app.tool(title="Edit file", read_only=False, destructive=True, idempotent=False,
              open_world=False, scopes=[WRITE_SCOPE])
    async def edit_file(
        path: PathArg,
        edits: Annotated[list[EditOperation], Field(min_length=1, description="Replacements, applied in order")],
        ctx: Context,
        dryRun: Annotated[bool, Field(description="Only show the diff, change nothing")] = False,
    ) -> str:
        """Replace text in a file and return a unified diff of the change.

        Each oldText must match exactly one place, exactly or ignoring whitespace differences
        (then newText is re-indented to match the file). Use dryRun to preview.
        """
        sp = await settings.resolve(ctx, path)
        wanted = [ops.Edit(edit.oldText, edit.newText) for edit in edits]
        plan = await run_io(_plan, sp, wanted, path)
        diff = ops.fenced(plan.diff)
        if dryRun or not plan.changed:
            return diff if plan.changed else "No changes: the edits leave the file as it is."
        await confirm_change(ctx, settings.confirm_writes, f"Apply these changes to {sp.display}?\n\n{diff}")
        await run_io(_commit, sp, plan)
        return diff

    @app.tool(title="Create directory", read_only=False, destructive=False, idempotent=True,
              open_world=False, scopes=[WRITE_SCOPE])
    async def create_directory(path: PathArg, ctx: Context) -> str:
        """Create a directory, with any missing parents; succeeds if it already exists."""
        sp = await settings.resolve(ctx, path)
        created = await run_io(ops.create_directory, sp)
        return f"Successfully created directory {path}" if created else f"Directory {path} already exists"

    @app.tool(title="Move file", read_only=False, destructive=True, idempotent=False,
              open_world=False, scopes=[WRITE_SCOPE])
    async def move_file(
        source: Annotated[str, Field(description="The file or directory to move")],
        destination: Annotated[str, Field(description="Its new path; must not exist yet")],
        ctx: Context,
    ) -> str:
        """Move or rename a file or directory. Fails, changing nothing, if the destination exists."""
        src = await settings.resolve(ctx, source, follow_final=False)
        dst = await settings.resolve(ctx, destination, follow_final=False)
        await confirm_change(ctx, settings.confirm_writes, f"Move {src.display} to {dst.display}?")
        await run_io(ops.move, src, dst)
        return f"Successfully moved {source} to {destination}"


def _read_for_edit(sp: SandboxedPath) -> str:
    return ops.decode_utf8(ops.read_bytes(sp, MAX_EDIT_BYTES), sp.label)


def _plan(sp: SandboxedPath, edits: list[ops.Edit], name: str) -> ops.EditPlan:
    return ops.plan_edits(_read_for_edit(sp), edits, name, sp.label)


def _commit(sp: SandboxedPath, plan: ops.EditPlan) -> None:
    """Write the planned content, unless the file changed since it was planned (e.g. during confirmation)."""
    if _read_for_edit(sp).replace("\r\n", "\n") != plan.original:
        raise FilesystemError(f"{sp.label} changed while the edit was being prepared; nothing was written. Try again.")
    ops.atomic_write(sp, plan.encoded())

