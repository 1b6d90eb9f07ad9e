"""Reading files: text with head/tail and a byte limit, media as bytes, metadata.

Text must be UTF-8: anything else (or data with NUL bytes) is reported as
binary with a hint to use `read_media_file`, never decoded into garbage.
"""

from __future__ import annotations

import codecs
import mimetypes
import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..errors import FilesystemError
from ..names import display_path
from ..sandbox import SandboxedPath
from .opening import entry_stat, kind_of, open_regular_file, read_at_most

EXTRA_MIME_TYPES = {
    ".webp": "image/webp",
    ".flac": "audio/flac",
    ".ogg": "audio/ogg",
    ".m4a": "audio/mp4",
    ".svg": "image/svg+xml",
    ".md": "text/markdown",
}
BINARY_SNIFF_BYTES = 8192


class BinaryFileError(FilesystemError):
    """The file is not UTF-8 text."""


@dataclass(frozen=True)
class TextRead:
    """The text returned by a read, and whether the byte limit cut it short."""

    text: str
    size: int
    truncated: bool
    limit: int

    def with_note(self) -> str:
        """The text, followed by a note when it was truncated."""
        if not self.truncated:
            return self.text
        return (
            f"{self.text}\n\n[truncated at {self.limit} bytes: the file has {self.size} bytes; "
            "use head/tail to read other parts]"
        )


def guess_mime_type(path: Path) -> str:
    """A MIME type from the file name (application/octet-stream when unknown)."""
    suffix = path.suffix.lower()
    if suffix in EXTRA_MIME_TYPES:
        return EXTRA_MIME_TYPES[suffix]
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def decode_utf8(data: bytes, label: str, *, cut: bool = False) -> str:
    """Decode UTF-8 strictly; `cut` tolerates a character split at the very end."""
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise BinaryFileError(
            f"{label} looks like a binary file (it contains NUL bytes); use read_media_file to read it as base64."
        )
    try:
        if cut:
            return codecs.getincrementaldecoder("utf-8")("strict").decode(data, final=False)
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BinaryFileError(
            f"{label} is not UTF-8 text (invalid byte at offset {exc.start}); "
            "use read_media_file to read it as base64."
        ) from None


def read_text(sp: SandboxedPath, limit: int, head: int | None = None, tail: int | None = None) -> TextRead:
    """Read a text file, or its first `head` / last `tail` lines, returning at most `limit` bytes."""
    if head is not None and tail is not None:
        raise FilesystemError("Cannot use head and tail together; pass only one of them.")
    with open_regular_file(sp) as fd:
        size = os.fstat(fd).st_size
        if tail is not None:
            return _read_tail(fd, sp.label, size, tail, limit)
        data = read_at_most(fd, limit + 1)
    if head is not None:
        return _take_head(data, sp.label, size, head, limit)
    truncated = len(data) > limit
    text = decode_utf8(data[:limit], sp.label, cut=truncated)
    return TextRead(text, size, truncated, limit)


def _take_head(data: bytes, label: str, size: int, lines: int, limit: int) -> TextRead:
    if lines <= 0:
        return TextRead("", size, False, limit)
    end = -1
    for _ in range(lines):
        end = data.find(b"\n", end + 1)
        if end < 0:
            break
    if 0 <= end < limit:
        return TextRead(decode_utf8(data[:end], label), size, False, limit)
    truncated = len(data) > limit
    text = decode_utf8(data[:limit], label, cut=truncated)
    return TextRead(text.removesuffix("\n"), size, truncated, limit)


def _read_tail(fd: int, label: str, size: int, lines: int, limit: int) -> TextRead:
    if lines <= 0:
        return TextRead("", size, False, limit)
    start = max(0, size - limit)
    data = read_at_most(fd, size - start, start)
    body = data[:-1] if data.endswith(b"\n") else data
    cut_at = len(body)
    for _ in range(lines):
        cut_at = body.rfind(b"\n", 0, cut_at)
        if cut_at < 0:
            break
    if cut_at >= 0 or start == 0:
        return TextRead(decode_utf8(body[cut_at + 1 :], label), size, False, limit)
    skip = 0
    while skip < 3 and skip < len(body) and 0x80 <= body[skip] <= 0xBF:
        skip += 1
    return TextRead(decode_utf8(body[skip:], label), size, True, limit)


def read_bytes(sp: SandboxedPath, limit: int) -> bytes:
    """Read a whole file as bytes, refusing files larger than `limit`."""
    with open_regular_file(sp) as fd:
        size = os.fstat(fd).st_size
        if size > limit:
            raise FilesystemError(
                f"{sp.label} is too large to return ({size} bytes; the limit is {limit} bytes)."
            )
        data = read_at_most(fd, limit + 1)
    if len(data) > limit:
        raise FilesystemError(f"{sp.label} grew past the limit of {limit} bytes while being read.")
    return data


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=UTC).isoformat()


def file_info(sp: SandboxedPath) -> dict[str, object]:
    """Metadata of a file or directory (sizes in bytes, times in ISO 8601 UTC).

    The entry is described from the directory the walk verified, never by its path string,
    and a link is described as a link: nothing outside the allowed directories is reported.
    """
    with sp.locate() as location:
        st = entry_stat(sp, location)
        where = location.path
    created = getattr(st, "st_birthtime", None) or st.st_ctime
    return {
        "path": display_path(where, os.sep),
        "type": kind_of(st.st_mode).removeprefix("a ").removeprefix("an "),
        "size": st.st_size,
        "created": _iso(created),
        "modified": _iso(st.st_mtime),
        "accessed": _iso(st.st_atime),
        "isDirectory": stat.S_ISDIR(st.st_mode),
        "isFile": stat.S_ISREG(st.st_mode),
        "permissions": format(stat.S_IMODE(st.st_mode), "03o"),
    }
