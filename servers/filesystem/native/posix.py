"""POSIX (Linux, macOS, BSD): directories as file descriptors, every operation an `*at` call.

Each sub-directory is opened with `O_DIRECTORY | O_NOFOLLOW` relative to its parent's
descriptor, files with `O_NOFOLLOW | O_NONBLOCK` (a FIFO never blocks the open), and what was
opened is checked with `fstat` on the descriptor. Renames, links and removals name one entry
of a verified directory descriptor, so no path string is ever resolved twice.

Imported only where `sys.platform != "win32"` (see `native/__init__.py`); must not import the
sandbox or the operations.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterator

from .base import Directory, LinkEncountered, NotRegularFile

assert sys.platform != "win32"  # tells type checkers this module is POSIX-only

DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
FOLLOWS_LINKS = True  # links inside the roots are followed by the sandbox's own resolver


def _link_error(name: str) -> LinkEncountered:
    return LinkEncountered(errno.ELOOP, "is a symbolic link", name)


class FdDirectory:
    """A directory held as a descriptor."""

    __slots__ = ("_fd", "_path")

    def __init__(self, fd: int, path: str) -> None:
        self._fd = fd
        self._path = path

    def __repr__(self) -> str:
        return f"FdDirectory({self._path!r}, fd={self._fd})"

    @property
    def path(self) -> str:
        return self._path

    @property
    def fd(self) -> int:
        return self._fd

    def reopen(self) -> FdDirectory:
        return FdDirectory(os.open(".", DIRECTORY_FLAGS, dir_fd=self._fd), self._path)

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def stat_self(self) -> os.stat_result:
        return os.fstat(self._fd)

    def lstat(self, name: str) -> os.stat_result:
        return os.stat(name, dir_fd=self._fd, follow_symlinks=False)

    def readlink(self, name: str) -> str:
        return os.readlink(name, dir_fd=self._fd)

    def open_directory(self, name: str) -> FdDirectory:
        try:
            fd = os.open(name, DIRECTORY_FLAGS, dir_fd=self._fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and self._is_link(name)):
                raise _link_error(name) from None
            raise
        return FdDirectory(fd, _join(self._path, name))

    def _is_link(self, name: str) -> bool:
        try:
            return stat.S_ISLNK(self.lstat(name).st_mode)
        except OSError:
            return False

    def open_file(self, name: str) -> int:
        try:
            fd = os.open(name, READ_FLAGS, dir_fd=self._fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP or (exc.errno == errno.EMLINK and self._is_link(name)):
                raise _link_error(name) from None  # (FreeBSD reports a link under O_NOFOLLOW as EMLINK)
            raise
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise NotRegularFile(mode)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def create_exclusive(self, name: str) -> int:
        try:
            return os.open(name, CREATE_FLAGS, 0o600, dir_fd=self._fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _link_error(name) from None
            raise

    def make_directory(self, name: str) -> None:
        os.mkdir(name, dir_fd=self._fd)

    def replace(self, name: str, target: Directory, target_name: str) -> None:
        os.replace(name, target_name, src_dir_fd=self._fd, dst_dir_fd=_fd_of(target))

    def rename(self, name: str, target: Directory, target_name: str) -> None:
        os.rename(name, target_name, src_dir_fd=self._fd, dst_dir_fd=_fd_of(target))

    def hard_link(self, name: str, target: Directory, target_name: str) -> None:
        os.link(name, target_name, src_dir_fd=self._fd, dst_dir_fd=_fd_of(target), follow_symlinks=False)

    def unlink(self, name: str) -> None:
        os.unlink(name, dir_fd=self._fd)

    def scan(self) -> Iterator[os.DirEntry[str]]:
        with os.scandir(self._fd) as entries:  # scandir works on its own duplicate, rewound on close
            yield from entries


def _fd_of(directory: Directory) -> int:
    if not isinstance(directory, FdDirectory):
        raise TypeError("both directories must come from the same platform layer")
    return directory.fd


def _join(parent: str, name: str) -> str:
    return parent + name if parent.endswith("/") else f"{parent}/{name}"


def open_root(path: str) -> FdDirectory:
    """Open an allowed directory given by its real path (links in it were resolved at start-up)."""
    return FdDirectory(os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC), path)


def set_mode(fd: int, mode: int) -> None:
    """Give an open file these permission bits."""
    os.fchmod(fd, mode)


def keep_owner(fd: int, st: os.stat_result) -> None:
    """Give an open file the owner of `st` where we may (root or the same owner); else leave it."""
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except OSError:
        pass
