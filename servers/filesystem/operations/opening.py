"""Opening files safely: type checked before opening, no symlink at the last step, never blocking.

A FIFO or a device is refused from its `lstat` before it is ever opened; the
open itself uses `O_NOFOLLOW | O_NONBLOCK` relative to a verified directory
descriptor, and the opened descriptor is checked again (type and location), so
a file swapped for a link or a FIFO between the check and the open is refused.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import AccessDenied, FilesystemError
from ..sandbox import SandboxedPath

READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


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


def require_regular(sp: SandboxedPath, mode: int) -> None:
    """Refuse anything but a regular file, naming what it is."""
    if stat.S_ISLNK(mode):
        raise AccessDenied(f"Access denied: {sp.label} was replaced by a symbolic link while being accessed.")
    if not stat.S_ISREG(mode):
        raise FilesystemError(f"{sp.label} is {kind_of(mode)}, not a regular file; refused.")


def lstat_existing(sp: SandboxedPath) -> os.stat_result:
    """`lstat` the resolved path, with a clear error when it does not exist."""
    try:
        return os.lstat(sp.path)
    except FileNotFoundError:
        raise FilesystemError(f"No such file or directory: {sp.label}") from None
    except NotADirectoryError:
        raise FilesystemError(f"A parent of {sp.label} is not a directory.") from None


@contextmanager
def open_regular_file(sp: SandboxedPath) -> Iterator[int]:
    """Open a regular file for reading and yield its descriptor."""
    require_regular(sp, lstat_existing(sp).st_mode)
    with sp.open_directory() as dir_fd:
        try:
            fd = os.open(sp.path.name, READ_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            raise FilesystemError(f"No such file or directory: {sp.label}") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise AccessDenied(
                    f"Access denied: {sp.label} was replaced by a symbolic link while being accessed."
                ) from None
            raise
    try:
        require_regular(sp, os.fstat(fd).st_mode)
        sp.verify_fd(fd)
        yield fd
    finally:
        os.close(fd)


def read_at_most(fd: int, limit: int, offset: int = 0) -> bytes:
    """Read up to `limit` bytes from `offset` (fewer only at end of file)."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.pread(fd, min(remaining, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
