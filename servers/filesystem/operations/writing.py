"""Changing files: atomic writes, directory creation and no-clobber moves.

Writes go to a fresh temporary file created exclusively (`O_EXCL | O_NOFOLLOW`)
in the target's own, verified directory, get the old file's permissions, are
flushed to disk and only then renamed over the target. A failure at any step
removes the temporary file and leaves the old content untouched, and a symbolic
link planted at the target name is replaced, never followed.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from ..errors import AccessDenied, FilesystemError
from ..sandbox import SandboxedPath, is_within

TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


DEFAULT_FILE_MODE = 0o666 & ~_current_umask()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _existing_entry(dir_fd: int, name: str, label: str) -> os.stat_result | None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise AccessDenied(f"Access denied: {label} became a symbolic link while being written; nothing was written.")
    if not stat.S_ISREG(st.st_mode):
        raise FilesystemError(f"{label} exists and is not a regular file; nothing was written.")
    return st


def atomic_write(sp: SandboxedPath, data: bytes) -> bool:
    """Replace (or create) the file at `sp` with `data` atomically; True when it was created."""
    if sp.is_root:
        raise FilesystemError(f"{sp.label} is an allowed directory itself, not a file.")
    name = sp.path.name
    with sp.open_directory() as dir_fd:
        old = _existing_entry(dir_fd, name, sp.label)
        temp_name = f".{name[:100]}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temp_name, TEMP_FLAGS, 0o600, dir_fd=dir_fd)
        try:
            try:
                _write_all(fd, data)
                os.fchmod(fd, stat.S_IMODE(old.st_mode) if old else DEFAULT_FILE_MODE)
                if old is not None:
                    _keep_owner(fd, old)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp_name, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            _remove_quietly(temp_name, dir_fd)
            raise
    return old is None


def _keep_owner(fd: int, old: os.stat_result) -> None:
    try:
        os.fchown(fd, old.st_uid, old.st_gid)
    except OSError:
        pass  # only possible for privileged processes or the same owner; permissions are kept anyway


def _remove_quietly(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def create_directory(sp: SandboxedPath) -> bool:
    """Create a directory and its missing parents; True when something was created."""
    if os.path.isdir(sp.path):
        return False
    if os.path.lexists(sp.path):
        raise FilesystemError(f"{sp.label} exists and is not a directory.")
    try:
        os.makedirs(sp.path, exist_ok=True)
    except FileExistsError:
        raise FilesystemError(f"A component of {sp.label} exists and is not a directory.") from None
    except NotADirectoryError:
        raise FilesystemError(f"A component of {sp.label} is not a directory.") from None
    if not is_within(Path(os.path.realpath(sp.path)), sp.roots):
        raise AccessDenied(f"Access denied: {sp.label} changed while it was being created.")
    return True


def move(source: SandboxedPath, destination: SandboxedPath) -> None:
    """Move or rename `source` to `destination`, failing when the destination exists."""
    if source.is_root:
        raise FilesystemError(f"{source.label} is an allowed directory itself and cannot be moved.")
    if not source.exists():
        raise FilesystemError(f"No such file or directory: {source.label}")
    if destination.exists():
        raise FilesystemError(f"Destination {destination.label} already exists; nothing was moved.")
    if destination.path.is_relative_to(source.path):
        raise FilesystemError(f"Cannot move {source.label} into itself.")
    with source.open_directory() as src_dir, destination.open_directory() as dst_dir:
        src_name, dst_name = source.path.name, destination.path.name
        src_mode = os.stat(src_name, dir_fd=src_dir, follow_symlinks=False).st_mode
        if not stat.S_ISDIR(src_mode) and _link_then_unlink(src_name, dst_name, src_dir, dst_dir):
            return
        if _exists_at(dst_name, dst_dir):
            raise FilesystemError(f"Destination {destination.label} already exists; nothing was moved.")
        try:
            os.rename(src_name, dst_name, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
        except OSError as exc:
            if exc.errno == errno.EXDEV:
                raise FilesystemError(
                    f"Cannot move {source.label} to {destination.label}: they are on different file systems."
                ) from None
            raise


def _link_then_unlink(src_name: str, dst_name: str, src_dir: int, dst_dir: int) -> bool:
    """Move a non-directory without ever replacing an existing destination (link is no-clobber)."""
    try:
        os.link(src_name, dst_name, src_dir_fd=src_dir, dst_dir_fd=dst_dir, follow_symlinks=False)
    except FileExistsError:
        raise FilesystemError("Destination already exists; nothing was moved.") from None
    except OSError:
        return False  # hard links unsupported here (other file system, FUSE...): fall back to rename
    os.unlink(src_name, dir_fd=src_dir)
    return True


def _exists_at(name: str, dir_fd: int) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True
