"""What every platform's file-system primitives offer the sandbox: an open, verified directory.

A `Directory` is a handle on a directory that was reached without following a link. Every
operation on it names a single entry (never a path with separators) and never follows a
link at that entry, so whatever a path string pointed at when it was checked, the operation
acts on the directory that was verified. The POSIX implementation holds a directory file
descriptor and uses the `*at` system calls; the Windows one holds a directory handle that
forbids renaming or deleting it while held, and checks the final path of what it opens.

Must not import the sandbox or the operations (they are built on this).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import Protocol


class LinkEncountered(OSError):
    """The entry is a symbolic link (or, on Windows, any reparse point such as a junction)."""


class NotRegularFile(OSError):
    """The entry opened for reading is not a regular file; `mode` says what it is."""

    def __init__(self, mode: int) -> None:
        super().__init__("not a regular file")
        self.mode = mode


class EntryRefused(OSError):
    """A name that this platform refuses outright (Windows device names, streams, short names...)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Directory(Protocol):
    """An open directory reached without following links. Close it when done."""

    @property
    def path(self) -> str:
        """Where the directory was when it was opened, for messages and results."""
        ...

    def reopen(self) -> Directory:
        """A second, independent handle on the same directory."""
        ...

    def close(self) -> None: ...

    def stat_self(self) -> os.stat_result:
        """Metadata of this directory (from the handle, not from its path)."""
        ...

    def lstat(self, name: str) -> os.stat_result:
        """Metadata of the entry `name`; a link is described as a link, never followed."""
        ...

    def readlink(self, name: str) -> str:
        """The target of the link `name`."""
        ...

    def open_directory(self, name: str) -> Directory:
        """Open the sub-directory `name`; `LinkEncountered` when it is a link."""
        ...

    def open_file(self, name: str) -> int:
        """A read-only, non-blocking descriptor of the regular file `name` (checked on the descriptor)."""
        ...

    def create_exclusive(self, name: str) -> int:
        """Create `name` (which must not exist, not even as a link) for writing, mode 0600."""
        ...

    def make_directory(self, name: str) -> None: ...

    def replace(self, name: str, target: Directory, target_name: str) -> None:
        """Rename `name` to `target_name` in `target`, replacing what is there (a link is replaced, not followed)."""
        ...

    def rename(self, name: str, target: Directory, target_name: str) -> None:
        """Rename `name` to `target_name` in `target` (the caller made sure the target does not exist)."""
        ...

    def hard_link(self, name: str, target: Directory, target_name: str) -> None:
        """Link `name` as `target_name` in `target`; `FileExistsError` when that exists."""
        ...

    def unlink(self, name: str) -> None: ...

    def scan(self) -> Iterator[os.DirEntry[str]]:
        """The entries of this directory, as `os.DirEntry` (`.stat()` without following links)."""
        ...


def is_link_mode(st: os.stat_result) -> bool:
    """True for a symbolic link, and on Windows for any reparse point (junctions, mount points)."""
    if stat.S_ISLNK(st.st_mode):
        return True
    attributes = getattr(st, "st_file_attributes", 0)
    return bool(attributes & getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400))


def is_link_entry(entry: os.DirEntry[str]) -> bool:
    """True when a directory entry is a link (any reparse point on Windows), judged without following it."""
    if entry.is_symlink():
        return True
    junction = getattr(entry, "is_junction", None)
    if junction is not None and junction():
        return True
    if hasattr(os.stat_result, "st_file_attributes"):
        try:
            return is_link_mode(entry.stat(follow_symlinks=False))
        except OSError:
            return False
    return False
