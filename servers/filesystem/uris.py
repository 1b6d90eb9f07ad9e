"""Conversion between local paths and `file://` URIs (resources and client roots)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, unquote, urlsplit


def path_from_file_uri(uri: str) -> str | None:
    """The local path of a `file://` URI, or None for other schemes or remote hosts."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    path = unquote(parts.path)
    return path if path.startswith("/") else None


def file_uri(path: Path | str) -> str:
    """The `file://` URI of an absolute local path."""
    return "file://" + quote(str(path), safe="/")
