"""Read a directory tree of skills into memory, safely and within bounds.

On POSIX the walk holds each directory open and reaches every child relative to its parent's
descriptor with `O_NOFOLLOW`, so nothing a path string says is trusted twice: a directory or
file swapped for a symbolic link while the walk runs is refused, never followed. Symbolic links,
special files (FIFOs, sockets, devices), hidden names (starting with '.') and `__pycache__` are
left out; links and special files with a warning in the log. On Windows, where Python offers no
descriptor-relative opening, the walk goes by path and still refuses links and reparse points.

Everything read counts against the limits given, checked as the bytes arrive, so an oversized
tree fails fast with a message naming the limit instead of filling memory. A file over the
per-file limit fails the scan too, or (`ScanLimits.leave_out_oversized`) is left out, never read
past the limit, and listed in `ScannedTree.oversized`, so the caller can refuse just what holds it.

Must not import: session, server, dispatcher, transports.
"""

from __future__ import annotations

import logging
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ._errors import ScanError

logger = logging.getLogger("mcp_kit.skills")

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_DESCRIPTOR_WALK = sys.platform != "win32" and os.open in os.supports_dir_fd
MAX_DEPTH = 32
SKIPPED_NAMES = frozenset({"__pycache__"})


@dataclass(frozen=True, slots=True)
class ScanLimits:
    """Bounds on one scan: files, bytes per file, bytes overall. With `leave_out_oversized` a file over
    `max_file_bytes` is left out and listed in `ScannedTree.oversized` (its bytes neither kept nor
    counted) instead of failing the scan."""

    max_files: int
    max_file_bytes: int
    max_total_bytes: int
    leave_out_oversized: bool = False


@dataclass(slots=True)
class ScannedTree:
    """What a walk found: file contents and directories, by their parts relative to the root."""

    files: dict[tuple[str, ...], bytes] = field(default_factory=dict)
    directories: set[tuple[str, ...]] = field(default_factory=set)
    total_bytes: int = 0
    oversized: set[tuple[str, ...]] = field(default_factory=set)  # files over max_file_bytes, left out


def scan_tree(root: Path, limits: ScanLimits) -> ScannedTree:
    """Every regular file under `root` (a directory), read whole, within `limits`."""
    tree = ScannedTree()
    tree.directories.add(())
    if _DESCRIPTOR_WALK:
        try:
            fd = os.open(root, os.O_RDONLY | _DIRECTORY)
        except OSError as exc:
            raise ScanError(f"cannot open the skills directory {str(root)!r}: {exc.strerror}") from None
        try:
            _walk_descriptor(fd, (), tree, limits, root)
        finally:
            os.close(fd)
    else:
        if not root.is_dir():
            raise ScanError(f"the skills directory {str(root)!r} is not a directory")
        _walk_path(root, (), tree, limits, root)
    return tree


def _accept_name(name: str, where: str) -> bool:
    if name.startswith(".") or name in SKIPPED_NAMES:
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        logger.warning("skills: left out %r in %s: the name is not valid UTF-8", name, where)
        return False
    return True


def _walk_descriptor(fd: int, parts: tuple[str, ...], tree: ScannedTree, limits: ScanLimits, root: Path) -> None:
    if len(parts) > MAX_DEPTH:
        raise ScanError(f"{_show(root, parts)} is nested more than {MAX_DEPTH} directories deep")
    with os.scandir(fd) as entries:
        names = sorted((entry.name, entry) for entry in entries)
    for name, entry in names:
        if not _accept_name(name, _show(root, parts)):
            continue
        child = (*parts, name)
        if entry.is_symlink():
            logger.warning("skills: left out the symbolic link %s (links are never followed)", _show(root, child))
            continue
        if entry.is_dir(follow_symlinks=False):
            try:
                child_fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                raise ScanError(f"cannot open {_show(root, child)}: {exc.strerror}") from None
            try:
                tree.directories.add(child)
                _walk_descriptor(child_fd, child, tree, limits, root)
            finally:
                os.close(child_fd)
        elif entry.is_file(follow_symlinks=False):
            try:
                file_fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=fd)
            except OSError as exc:
                raise ScanError(f"cannot open {_show(root, child)}: {exc.strerror}") from None
            _add_file(file_fd, child, tree, limits, root)
        else:
            logger.warning("skills: left out %s: not a regular file or directory", _show(root, child))


def _walk_path(directory: Path, parts: tuple[str, ...], tree: ScannedTree, limits: ScanLimits, root: Path) -> None:
    if len(parts) > MAX_DEPTH:
        raise ScanError(f"{_show(root, parts)} is nested more than {MAX_DEPTH} directories deep")
    with os.scandir(directory) as entries:
        names = sorted((entry.name, entry) for entry in entries)
    for name, entry in names:
        if not _accept_name(name, _show(root, parts)):
            continue
        child = (*parts, name)
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode) or getattr(info, "st_reparse_tag", None):
            logger.warning("skills: left out the link %s (links are never followed)", _show(root, child))
        elif stat.S_ISDIR(info.st_mode):
            tree.directories.add(child)
            _walk_path(directory / name, child, tree, limits, root)
        elif stat.S_ISREG(info.st_mode):
            try:
                file_fd = os.open(directory / name, os.O_RDONLY | _BINARY)
            except OSError as exc:
                raise ScanError(f"cannot open {_show(root, child)}: {exc.strerror}") from None
            _add_file(file_fd, child, tree, limits, root)
        else:
            logger.warning("skills: left out %s: not a regular file or directory", _show(root, child))


def _add_file(fd: int, parts: tuple[str, ...], tree: ScannedTree, limits: ScanLimits, root: Path) -> None:
    """Read one opened file (closing it) into the tree, within the limits."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            logger.warning("skills: left out %s: not a regular file", _show(root, parts))
            return
        if limits.leave_out_oversized and info.st_size > limits.max_file_bytes:  # known too large: not read at all
            tree.oversized.add(parts)
            return
        if len(tree.files) >= limits.max_files:
            raise ScanError(f"{_show(root, ())} holds more than {limits.max_files} files")
        room = min(limits.max_file_bytes, limits.max_total_bytes - tree.total_bytes)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, min(1 << 20, room - size + 1))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > room:
                if room == limits.max_file_bytes and limits.leave_out_oversized:  # it grew while being read
                    tree.oversized.add(parts)
                    return
                limit, what = ((limits.max_file_bytes, "a file") if room == limits.max_file_bytes
                               else (limits.max_total_bytes, "all skills together"))
                raise ScanError(f"{_show(root, parts)} is too large: {what} may hold at most {limit} bytes")
    finally:
        os.close(fd)
    tree.files[parts] = b"".join(chunks)
    tree.total_bytes += size


def _show(root: Path, parts: tuple[str, ...]) -> str:
    return str(root.joinpath(*parts)) if parts else str(root)
