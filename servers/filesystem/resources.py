"""Files as resources (`file:///{+path}` inside the allowed directories), and their subscriptions.

resources/list shows the allowed directories; reading a directory gives its
listing, a UTF-8 file its text, anything else a base64 blob. Subscribing to a
file's URI starts a watchfiles watcher that notifies on every change.
"""

from __future__ import annotations

import base64
import logging
import os
import stat
from typing import Any

import anyio.to_thread

from mcp_kit import BlobResourceContents, Context, MCPServer, ResourceNotFound, TextResourceContents

from . import operations as ops
from .config import Settings
from .errors import FilesystemError
from .formatting import listing_text
from .names import display_name, display_path, parse_path
from .sandbox import Sandbox
from .uris import file_uri, path_from_template
from .watch import watch_file

logger = logging.getLogger("servers.filesystem.resources")

FILE_TEMPLATE = "file:///{+path}"


def register_resources(app: MCPServer, settings: Settings) -> None:
    """Register the file template, the roots lister and the file watcher."""

    @app.resource(FILE_TEMPLATE, name="file", title="File or directory in an allowed directory")
    async def read_file_resource(path: str, ctx: Context) -> TextResourceContents | BlobResourceContents:
        """A file (text or base64 blob by content) or a directory listing inside the allowed directories.

        Names that are not valid UTF-8 are written in the URI in their escaped display form (bad%5Cxff.txt).
        """
        local = path_from_template(path)
        uri = file_uri(parse_path(local) if os.sep == "/" else local) if local else f"file:///{path}"
        if local is None:
            raise ResourceNotFound(uri, f"{uri}: not a local absolute path")
        sandbox = await settings.sandbox_for(ctx)
        try:
            return await anyio.to_thread.run_sync(_read_contents, uri, sandbox, local, settings)
        except FilesystemError as exc:
            raise ResourceNotFound(uri, f"{uri}: {exc}") from None
        except OSError as exc:
            raise ResourceNotFound(uri, f"{uri}: {exc.strerror or type(exc).__name__}") from None

    @app.resource_lister
    def list_roots() -> list[dict[str, Any]]:
        return [
            {"uri": file_uri(root), "name": display_name(root.name) or display_path(str(root), os.sep),
             "title": f"Allowed directory {display_path(str(root), os.sep)}",
             "description": "An allowed directory; reading it lists its entries."}
            for root in settings.sandbox.roots
        ]

    @app.watcher(FILE_TEMPLATE)
    async def watch(uri: str, path: str) -> None:
        try:
            sp = settings.sandbox.resolve("/" + path)  # mcp_kit hands watchers decoded variables
        except FilesystemError as exc:
            logger.warning("not watching %s: %s", uri, exc)
            return
        await watch_file(sp.path, lambda: app.notify_resource_updated(uri))


def _read_contents(uri: str, sandbox: Sandbox, local: str, settings: Settings) -> TextResourceContents | BlobResourceContents:
    """Read what `local` leads to now: a directory's listing, a UTF-8 file's text, anything else as a blob."""
    sp = sandbox.resolve(local)
    if stat.S_ISDIR(ops.lstat_existing(sp).st_mode):
        text = listing_text(ops.list_directory(sp, settings.max_entries))
        return TextResourceContents(uri=uri, mimeType="text/plain", text=text)
    data = ops.read_bytes(sp, settings.max_read_bytes)
    mime = ops.guess_mime_type(sp.path)
    try:
        text = ops.decode_utf8(data, sp.label)
    except ops.BinaryFileError:
        return BlobResourceContents(uri=uri, mimeType=mime, blob=base64.b64encode(data).decode())
    return TextResourceContents(uri=uri, mimeType=mime if mime != "application/octet-stream" else "text/plain", text=text)
