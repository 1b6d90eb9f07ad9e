"""Conversion between local paths and `file://` URIs (resources, client roots, tool arguments).

The server writes every name in a URI in its display form (see `names.py`), percent-encoded as
UTF-8, so its URIs are always valid and lead back to the same file. It reads both that form
and raw percent-encoded bytes (`%FF`) from clients. Windows paths become `file:///C:/dir/file`.

Must not import the sandbox or the operations.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote, unquote_to_bytes, urlsplit

from .names import display_path

IS_WINDOWS = os.name == "nt"
_DRIVE = re.compile(r"^/?([A-Za-z]:)(/|$)")


def path_from_file_uri(uri: str, *, windows: bool = IS_WINDOWS) -> str | None:
    """The local path of a `file://` URI, or None for other schemes or remote hosts."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    raw = unquote_to_bytes(parts.path)
    path = raw.decode("utf-8", "surrogatepass") if windows else os.fsdecode(raw)
    if windows:
        drive = _DRIVE.match(path)
        if drive is None:
            return None
        rest = path[drive.end(1):] or "/"
        return (drive.group(1) + rest).replace("/", "\\")
    return path if path.startswith("/") else None


def path_from_template(variable: str, *, windows: bool = IS_WINDOWS) -> str | None:
    """The local path named by the `{+path}` of `file:///{+path}` (already percent-decoded)."""
    return path_from_file_uri("file:///" + quote(variable, safe="/:\\"), windows=windows)


def file_uri(path: Path | str, *, windows: bool = IS_WINDOWS) -> str:
    """The `file://` URI of an absolute local path, names in their display form."""
    text = str(path)
    if windows:
        text = "/" + display_path(text.replace("/", "\\"), "\\").replace("\\", "/")
    else:
        text = display_path(text, "/")
    return "file://" + quote(text, safe="/:" if windows else "/")
