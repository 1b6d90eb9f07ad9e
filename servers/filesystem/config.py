"""The server's settings and the glue every tool uses: the session's sandbox, running file I/O.

The command-line roots are the outer bound. When the client offers roots
(`roots/list`), the session's sandbox is their intersection with that bound;
a client offering none keeps the command-line roots, and so does a 2026-07-28
request that cannot ask for them (`subscriptions/listen`: `Context.list_roots` is []).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio.to_thread

from mcp_kit import Context, ToolError

from .errors import FilesystemError
from .globmatch import GlobError
from .operations.walking import Cancellation
from .sandbox import Sandbox, SandboxedPath
from .uris import path_from_file_uri

T = TypeVar("T")

READ_SCOPE = "files:read"  # OAuth scope of the tools and the resource that only read (HTTP with --oauth-* only)
WRITE_SCOPE = "files:write"  # OAuth scope of the tools that change files
DEFAULT_MAX_READ_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_ENTRIES = 1000
MAX_EDIT_BYTES = 32 * 1024 * 1024
MAX_CACHED_ROOT_SETS = 64


@dataclass
class Settings:
    """Everything the tools need to know, fixed at start-up."""

    sandbox: Sandbox
    read_only: bool = False
    confirm_writes: bool = False
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES
    max_entries: int = DEFAULT_MAX_ENTRIES
    _narrowed: dict[tuple[str, ...], Sandbox] = field(default_factory=dict)

    async def sandbox_for(self, ctx: Context | None) -> Sandbox:
        """The sandbox of this session: the command-line roots narrowed by the client's roots."""
        if ctx is None or not ctx.client_supports("roots"):
            return self.sandbox
        uris = tuple(str(root.uri) for root in await ctx.list_roots())
        if not uris:
            return self.sandbox
        narrowed = self._narrowed.get(uris)
        if narrowed is None:
            if len(self._narrowed) >= MAX_CACHED_ROOT_SETS:
                self._narrowed.clear()
            paths = [p for p in (path_from_file_uri(uri) for uri in uris) if p is not None]
            narrowed = self._narrowed[uris] = self.sandbox.narrowed(paths)
        return narrowed

    async def resolve(self, ctx: Context | None, path: str, *, follow_final: bool = True) -> SandboxedPath:
        """Check a client path against the session's sandbox, as a tool error when refused."""
        sandbox = await self.sandbox_for(ctx)
        return await run_io(sandbox.resolve, path, follow_final=follow_final)


def guarded(fn: Callable[..., T], *args: Any, label: str | None = None, **kwargs: Any) -> T:
    """Call `fn`, turning refusals and OS errors into `ToolError`s with clear, safe messages."""
    try:
        return fn(*args, **kwargs)
    except FilesystemError as exc:
        raise ToolError(str(exc)) from None
    except GlobError as exc:
        raise ToolError(f"Invalid glob pattern: {exc}.") from None
    except OSError as exc:
        target = label or next((a.label for a in args if isinstance(a, SandboxedPath)), "the path")
        raise ToolError(f"{target}: {exc.strerror or type(exc).__name__}") from None


async def run_io(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a blocking file operation in a worker thread, with `guarded` error handling."""
    return await anyio.to_thread.run_sync(functools.partial(guarded, fn, *args, **kwargs))


async def run_walk(fn: Callable[..., T], *args: Any) -> T:
    """Run a directory walk in a worker thread that stops at its next check once the request is cancelled.

    The request's task does not wait for the thread: a cancelled call is answered (or dropped)
    at once, and the walk notices its `Cancellation` within a few entries and ends.
    """
    cancellation = Cancellation()
    try:
        return await anyio.to_thread.run_sync(
            functools.partial(guarded, fn, *args, cancellation=cancellation), abandon_on_cancel=True
        )
    finally:
        cancellation.cancel()
