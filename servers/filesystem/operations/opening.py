"""Opening what a walk found: files for reading, directories for listing, metadata of an entry.

A FIFO or a device is refused from its metadata before it is ever opened; the open itself
names one entry of a verified directory, never follows a link and never blocks, and the
descriptor is checked again (`fstat`), so a file swapped for a link or a FIFO between the
look and the open is refused.

Must not import the tools.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from .. import native
from ..errors import AccessDenied, FilesystemError
from ..resolver import Location
from ..sandbox import SandboxedPath


def kind_of(mode: int) -> str:
    """A human name for a file type, for messages."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "a regular file"


def replaced_by_link(sp: SandboxedPath) -> AccessDenied:
    return AccessDenied(f"Access denied: {sp.label} was replaced by a symbolic link while being accessed.")


def missing(sp: SandboxedPath) -> FilesystemError:
    return FilesystemError(f"No such file or directory: {sp.label}")


def require_regular(sp: SandboxedPath, mode: int) -> None:
    """Refuse anything but a regular file, naming what it is."""
    if stat.S_ISLNK(mode):
        raise replaced_by_link(sp)
    if not stat.S_ISREG(mode):
        raise FilesystemError(f"{sp.label} is {kind_of(mode)}, not a regular file; refused.")


def entry_stat(sp: SandboxedPath, location: Location) -> os.stat_result:
    """Metadata of what `location` points at: the directory itself or its final entry (never followed)."""
    if location.rest == ():
        return location.directory.stat_self()
    if location.name is None:
        raise missing(sp)
    try:
        return location.directory.lstat(location.name)
    except FileNotFoundError:
        raise missing(sp) from None


def lstat_existing(sp: SandboxedPath) -> os.stat_result:
    """Metadata of the path as it is now (walked again), with a clear error when it does not exist."""
    with sp.locate() as location:
        return entry_stat(sp, location)


@contextmanager
def open_regular_file(sp: SandboxedPath) -> Iterator[int]:
    """Open a regular file for reading and yield its descriptor."""
    with sp.locate() as location:
        require_regular(sp, entry_stat(sp, location).st_mode)
        assert location.name is not None  # entry_stat refused the directory case
        try:
            fd = location.directory.open_file(location.name)
        except FileNotFoundError:
            raise missing(sp) from None
        except native.LinkEncountered:
            raise replaced_by_link(sp) from None
        except native.NotRegularFile as exc:
            raise FilesystemError(f"{sp.label} is {kind_of(exc.mode)}, not a regular file; refused.") from None
    try:
        yield fd
    finally:
        os.close(fd)


@contextmanager
def open_directory(sp: SandboxedPath) -> Iterator[native.Directory]:
    """Open the directory at `sp` (walked now) and yield its handle."""
    with sp.locate() as location:
        if location.rest == ():
            directory = location.directory.reopen()
        else:
            mode = entry_stat(sp, location).st_mode
            if not stat.S_ISDIR(mode):
                raise FilesystemError(f"{sp.label} is {kind_of(mode)}, not a directory.")
            assert location.name is not None
            try:
                directory = location.directory.open_directory(location.name)
            except native.LinkEncountered:
                raise replaced_by_link(sp) from None
            except FileNotFoundError:
                raise missing(sp) from None
    try:
        yield directory
    finally:
        directory.close()


def read_at_most(fd: int, limit: int, offset: int = 0) -> bytes:
    """Read up to `limit` bytes from `offset` (fewer only at end of file)."""
    os.lseek(fd, offset, os.SEEK_SET)
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
