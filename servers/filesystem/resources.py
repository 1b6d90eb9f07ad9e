"""Files as resources (`file:///{+path}` inside the allowed directories), and their subscriptions.

resources/list shows the allowed directories; reading a directory gives its
listing, a UTF-8 file its text, anything else a base64 blob. Subscribing to a
file's URI starts a watchfiles watcher that notifies on every change.
"""

from __future__ import annotations

import base64
import logging
import stat
from typing import Any

import anyio.to_thread

from mcp_kit import BlobResourceContents, Context, MCPServer, ResourceNotFound, TextResourceContents

from . import operations as ops
from .config import Settings
from .errors import FilesystemError
from .formatting import listing_text
from .sandbox import SandboxedPath
from .uris import file_uri
from .watch import watch_file

logger = logging.getLogger("servers.filesystem.resources")

FILE_TEMPLATE = "file:///{+path}"


def register_resources(app: MCPServer, settings: Settings) -> None:
    """Register the file template, the roots lister and the file watcher."""

    @app.resource(FILE_TEMPLATE, name="file", title="File or directory in an allowed directory")
    async def read_file_resource(path: str, ctx: Context) -> TextResourceContents | BlobResourceContents:
        """A file (text or base64 blob by content) or a directory listing inside the allowed directories."""
        uri = file_uri("/" + path)
        sandbox = await settings.sandbox_for(ctx)
        try:
            sp = sandbox.resolve("/" + path)
            return await _contents(uri, sp, settings)
        except FilesystemError as exc:
            raise ResourceNotFound(f"{uri}: {exc}") from None
        except OSError as exc:
            raise ResourceNotFound(f"{uri}: {exc.strerror}") from None

    @app.resource_lister
    def list_roots() -> list[dict[str, Any]]:
        return [
            {"uri": file_uri(root), "name": root.name or str(root), "title": f"Allowed directory {root}",
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


async def _contents(uri: str, sp: SandboxedPath, settings: Settings) -> TextResourceContents | BlobResourceContents:
    return await anyio.to_thread.run_sync(_read_contents, uri, sp, settings)


def _read_contents(uri: str, sp: SandboxedPath, settings: Settings) -> TextResourceContents | BlobResourceContents:
    if not sp.exists():
        raise FilesystemError(f"No such file or directory: {sp.label}")
    if stat.S_ISDIR(sp.path.stat().st_mode):
        text = listing_text(ops.list_directory(sp, settings.max_entries))
        return TextResourceContents(uri=uri, mimeType="text/plain", text=text)
    data = ops.read_bytes(sp, settings.max_read_bytes)
    mime = ops.guess_mime_type(sp.path)
    try:
        text = ops.decode_utf8(data, sp.label)
    except ops.BinaryFileError:
        return BlobResourceContents(uri=uri, mimeType=mime, blob=base64.b64encode(data).decode())
    return TextResourceContents(uri=uri, mimeType=mime if mime != "application/octet-stream" else "text/plain", text=text)
