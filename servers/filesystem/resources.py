"""Files as resources (`file:///{+path}` inside the allowed directories), and their subscriptions.

resources/list shows the allowed directories; reading a directory gives its listing, a UTF-8
file its text, anything else a base64 blob. A URI's path is checked by the resource's
validator, which mcp_kit runs before every read and every subscription, so subscribing to a
file outside the roots gets the error reading it gets. Subscriptions feed the server's one
`DirectoryWatch`; a file whose directory does not exist yet is still seen when it appears.

Must not import the tools.
"""

from __future__ import annotations

import base64
import logging
import os
import stat
from typing import Any

import anyio
import anyio.to_thread
from anyio.abc import TaskStatus

from mcp_kit import BlobResourceContents, Context, MCPServer, ResourceNotFound, TextResourceContents

from . import operations as ops
from .config import READ_SCOPE, Settings
from .errors import FilesystemError
from .formatting import listing_text
from .names import display_name, display_path, parse_path
from .sandbox import Sandbox, SandboxedPath
from .uris import file_uri, path_from_file_uri, path_from_template
from .watch import DirectoryWatch

logger = logging.getLogger("servers.filesystem.resources")

FILE_TEMPLATE = "file:///{+path}"


def _local(path: str) -> tuple[str, str]:
    """The local path named by the template variable, and the canonical URI of it."""
    local = path_from_template(path)
    if local is None:
        uri = f"file:///{path}"
        raise ResourceNotFound(uri, f"{uri}: not an absolute local path")
    return local, file_uri(parse_path(local) if os.sep == "/" else local)


def _refused(uri: str, exc: Exception) -> ResourceNotFound:
    detail = str(exc) if isinstance(exc, FilesystemError) else getattr(exc, "strerror", None) or type(exc).__name__
    return ResourceNotFound(uri, f"{uri}: {detail}")


def register_resources(app: MCPServer, settings: Settings, watch: DirectoryWatch) -> None:
    """Register the file template, its validator, the roots lister and the watcher."""

    @app.resource(FILE_TEMPLATE, name="file", title="File or directory in an allowed directory",
                  scopes=[READ_SCOPE])
    async def read_file_resource(path: str, ctx: Context) -> TextResourceContents | BlobResourceContents:
        """A file (text or base64 blob by content) or a directory listing inside the allowed directories.

        Names that are not valid UTF-8 are written in the URI in their escaped display form (bad%5Cxff.txt).
        """
        local, uri = _local(path)
        sandbox = await settings.sandbox_for(ctx)
        try:
            return await anyio.to_thread.run_sync(_read_contents, uri, sandbox, local, settings)
        except (FilesystemError, OSError) as exc:
            raise _refused(uri, exc) from None

    @app.resource_validator(FILE_TEMPLATE)
    async def check_file_uri(path: str, ctx: Context) -> None:
        """Refuse a URI outside the session's allowed directories, exactly as a read would (nothing is read)."""
        local, uri = _local(path)
        sandbox = await settings.sandbox_for(ctx)
        try:
            await anyio.to_thread.run_sync(_check, sandbox, local)
        except (FilesystemError, OSError) as exc:
            raise _refused(uri, exc) from None

    @app.resource_lister
    def list_roots() -> list[dict[str, Any]]:
        return [
            {"uri": file_uri(root), "name": display_name(root.name) or display_path(str(root), os.sep),
             "title": f"Allowed directory {display_path(str(root), os.sep)}",
             "description": "An allowed directory; reading it lists its entries."}
            for root in settings.sandbox.roots
        ]

    @app.watcher(FILE_TEMPLATE)
    async def watch_file(uri: str, path: str, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        local = path_from_file_uri(uri)  # the URI itself: lossless, unlike the decoded variable
        try:
            if local is None:
                raise FilesystemError("not an absolute local path")
            sp = await anyio.to_thread.run_sync(settings.sandbox.resolve, local)
        except (FilesystemError, OSError) as exc:
            logger.warning("not watching %s: %s", uri, exc)
            return
        # registered (its current state noted) before the subscription is answered: no change is missed
        await watch.watch(sp.real, sp.anchor.path, lambda: app.notify_resource_updated(uri), task_status)


def _check(sandbox: Sandbox, local: str) -> SandboxedPath:
    return sandbox.resolve(local)


def _read_contents(
    uri: str, sandbox: Sandbox, local: str, settings: Settings
) -> TextResourceContents | BlobResourceContents:
    """Read what `local` leads to now: a directory's listing, a UTF-8 file's text, anything else as a blob."""
    sp = sandbox.resolve(local)
    if stat.S_ISDIR(ops.lstat_existing(sp).st_mode):
        text = listing_text(ops.list_directory(sp, settings.max_entries))
        return TextResourceContents(uri=uri, mime_type="text/plain", text=text)
    data = ops.read_bytes(sp, settings.max_read_bytes)
    mime = ops.guess_mime_type(sp.path)
    try:
        text = ops.decode_utf8(data, sp.label)
    except ops.BinaryFileError:
        return BlobResourceContents(uri=uri, mime_type=mime, blob=base64.b64encode(data).decode())
    return TextResourceContents(
        uri=uri, mime_type=mime if mime != "application/octet-stream" else "text/plain", text=text
    )
